/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * libxrl, plain helpers (sha256.c): SHA-256 of a buffer.
 */
#ifndef XRL_BASE_SHA256_H
#define XRL_BASE_SHA256_H

#include <stddef.h>

/* SHA-256 of len bytes, and its 64 hex digits. */
void xrl_sha256(const void *data, size_t len, unsigned char out[32]);
void xrl_sha256_hex(const unsigned char d[32], char out[65]);

#endif
