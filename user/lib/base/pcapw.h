/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The blocks of a pcapng file (Section Header, Interface Description,
 * Enhanced Packet Block with a comment and the direction) and of a classic
 * pcap file (its header, one record), encoded into a caller's buffer in
 * host byte order (both formats say their byte order with a magic number,
 * which readers check). Timestamps are nanoseconds: the pcapng interface
 * says if_tsresol 9, the pcap header has the nanosecond magic. No I/O.
 *
 * Each function returns the bytes it wrote, or 0 when they do not fit in
 * len (nothing written then).
 */
#ifndef XRL_BASE_PCAPW_H
#define XRL_BASE_PCAPW_H

#include <stddef.h>
#include <stdint.h>

#define XRL_PCAPNG_SHB		0x0A0D0D0AU
#define XRL_PCAPNG_IDB		0x00000001U
#define XRL_PCAPNG_EPB		0x00000006U
#define XRL_PCAPNG_BOM		0x1A2B3C4DU
#define XRL_PCAP_MAGIC_NS	0xA1B23C4DU
#define XRL_PCAPNG_OPT_COMMENT	1
#define XRL_PCAPNG_OPT_EPB_FLAGS	2
#define XRL_PCAPNG_OPT_IF_NAME	2
#define XRL_PCAPNG_OPT_IF_TSRESOL	9
#define XRL_PCAPNG_INBOUND	1	/* epb_flags bits 0-1: the direction */
#define XRL_LINKTYPE_ETHERNET	1

/* The section: its header with an shb_userappl option naming the writer. */
size_t xrl_pcapng_shb(uint8_t *buf, size_t len, const char *userappl);
/* An interface (id: its order in the section, from 0): nanosecond stamps. */
size_t xrl_pcapng_idb(uint8_t *buf, size_t len, uint16_t linktype, uint32_t snaplen,
		      const char *name);
/* One packet: caplen bytes of data captured of origlen; flags: epb_flags
 * (0: none); comment: an opt_comment (NULL or "": none). */
size_t xrl_pcapng_epb(uint8_t *buf, size_t len, uint32_t ifid, uint64_t ts_ns,
		      const void *data, uint32_t caplen, uint32_t origlen,
		      uint32_t flags, const char *comment);

/* A classic pcap file's header and one record (nanosecond stamps). */
size_t xrl_pcap_header(uint8_t *buf, size_t len, uint32_t snaplen, uint32_t linktype);
size_t xrl_pcap_record(uint8_t *buf, size_t len, uint64_t ts_ns, const void *data,
		       uint32_t caplen, uint32_t origlen);

#endif
