// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The pcapng and pcap encoders (pcapw.h). */
#include "base/pcapw.h"

#include <string.h>

#define PAD4(n)	(((n) + 3u) & ~(size_t)3u)

struct out {
	uint8_t *p;
	size_t off;
};

static void put32(struct out *o, uint32_t v)
{
	memcpy(o->p + o->off, &v, 4);
	o->off += 4;
}

static void put16(struct out *o, uint16_t v)
{
	memcpy(o->p + o->off, &v, 2);
	o->off += 2;
}

/* bytes, then zeros up to a multiple of 4 */
static void put_padded(struct out *o, const void *data, size_t n)
{
	if (n)
		memcpy(o->p + o->off, data, n);
	memset(o->p + o->off + n, 0, PAD4(n) - n);
	o->off += PAD4(n);
}

/* an option: code, length, value padded */
static void put_opt(struct out *o, uint16_t code, const void *v, size_t n)
{
	put16(o, code);
	put16(o, (uint16_t)n);
	put_padded(o, v, n);
}

static size_t opt_size(size_t n)
{
	return 4 + PAD4(n);
}

/* an option's value must fit its 16-bit length */
static size_t opt_len(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n > 0xffff ? 0xffff : n;
}

size_t xrl_pcapng_shb(uint8_t *buf, size_t len, const char *userappl)
{
	size_t ua = opt_len(userappl);
	size_t total = 24 + (ua ? opt_size(ua) + 4 : 0) + 4;
	struct out o = { buf, 0 };

	if (total > len)
		return 0;
	put32(&o, XRL_PCAPNG_SHB);
	put32(&o, (uint32_t)total);
	put32(&o, XRL_PCAPNG_BOM);
	put16(&o, 1);		/* version 1.0 */
	put16(&o, 0);
	put32(&o, 0xffffffffU);	/* section length: not known */
	put32(&o, 0xffffffffU);
	if (ua) {
		put_opt(&o, 4, userappl, ua);	/* shb_userappl */
		put32(&o, 0);			/* opt_endofopt */
	}
	put32(&o, (uint32_t)total);
	return o.off;
}

size_t xrl_pcapng_idb(uint8_t *buf, size_t len, uint16_t linktype, uint32_t snaplen,
		      const char *name)
{
	size_t nl = opt_len(name);
	size_t total = 16 + (nl ? opt_size(nl) : 0) + opt_size(1) + 4 + 4;
	uint8_t tsresol = 9;	/* 10^-9 s */
	struct out o = { buf, 0 };

	if (total > len)
		return 0;
	put32(&o, XRL_PCAPNG_IDB);
	put32(&o, (uint32_t)total);
	put16(&o, linktype);
	put16(&o, 0);
	put32(&o, snaplen);
	if (nl)
		put_opt(&o, XRL_PCAPNG_OPT_IF_NAME, name, nl);
	put_opt(&o, XRL_PCAPNG_OPT_IF_TSRESOL, &tsresol, 1);
	put32(&o, 0);
	put32(&o, (uint32_t)total);
	return o.off;
}

size_t xrl_pcapng_epb(uint8_t *buf, size_t len, uint32_t ifid, uint64_t ts_ns,
		      const void *data, uint32_t caplen, uint32_t origlen,
		      uint32_t flags, const char *comment)
{
	size_t cl = opt_len(comment);
	size_t opts = (cl ? opt_size(cl) : 0) + (flags ? opt_size(4) : 0);
	size_t total = 28 + PAD4((size_t)caplen) + (opts ? opts + 4 : 0) + 4;
	struct out o = { buf, 0 };

	if (total > len || total > 0xffffffffU)
		return 0;
	put32(&o, XRL_PCAPNG_EPB);
	put32(&o, (uint32_t)total);
	put32(&o, ifid);
	put32(&o, (uint32_t)(ts_ns >> 32));
	put32(&o, (uint32_t)ts_ns);
	put32(&o, caplen);
	put32(&o, origlen);
	put_padded(&o, data, caplen);
	if (cl)
		put_opt(&o, XRL_PCAPNG_OPT_COMMENT, comment, cl);
	if (flags)
		put_opt(&o, XRL_PCAPNG_OPT_EPB_FLAGS, &flags, 4);
	if (opts)
		put32(&o, 0);
	put32(&o, (uint32_t)total);
	return o.off;
}

size_t xrl_pcap_header(uint8_t *buf, size_t len, uint32_t snaplen, uint32_t linktype)
{
	struct out o = { buf, 0 };

	if (len < 24)
		return 0;
	put32(&o, XRL_PCAP_MAGIC_NS);
	put16(&o, 2);		/* version 2.4 */
	put16(&o, 4);
	put32(&o, 0);		/* thiszone */
	put32(&o, 0);		/* sigfigs */
	put32(&o, snaplen);
	put32(&o, linktype);
	return o.off;
}

size_t xrl_pcap_record(uint8_t *buf, size_t len, uint64_t ts_ns, const void *data,
		       uint32_t caplen, uint32_t origlen)
{
	struct out o = { buf, 0 };

	if (len < 16 || len - 16 < caplen)
		return 0;
	put32(&o, (uint32_t)(ts_ns / 1000000000ULL));
	put32(&o, (uint32_t)(ts_ns % 1000000000ULL));
	put32(&o, caplen);
	put32(&o, origlen);
	if (caplen)
		memcpy(o.p + o.off, data, caplen);
	o.off += caplen;
	return o.off;
}
