// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The pcapng and pcap encoders (user/lib/base/pcapw.c): the blocks' layout
 * and lengths (leading and trailing alike, multiples of 4), the padding of
 * data and options, the comment and the direction of a packet, the byte
 * order's magic, nanosecond stamps, and a buffer too small. Root-free.
 */
#include <stdint.h>
#include <string.h>

#include "testlib.h"
#include "base/pcapw.h"

static uint32_t u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint16_t u16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static void test_shb(void)
{
	uint8_t b[256];
	size_t n = xrl_pcapng_shb(b, sizeof(b), "xdp-rlctl capture");

	/* 24 + option (4 + 17 padded to 20) + end of options 4 + trailer 4 */
	CHECK_EQ(n, 56, "the section header's length");
	CHECK_EQ(u32(b), XRL_PCAPNG_SHB, "block type");
	CHECK_EQ(u32(b + 4), n, "leading length");
	CHECK_EQ(u32(b + n - 4), n, "trailing length");
	CHECK_EQ(u32(b + 8), XRL_PCAPNG_BOM, "byte-order magic, in host order");
	CHECK(b[8] == 0x4d && b[11] == 0x1a, "little endian on this host: bytes 4d .. 1a");
	CHECK_EQ(u16(b + 12), 1, "major version");
	CHECK_EQ(u16(b + 14), 0, "minor version");
	CHECK_EQ(u32(b + 16), 0xffffffffU, "section length unknown");
	CHECK_EQ(u16(b + 24), 4, "shb_userappl");
	CHECK_EQ(u16(b + 26), 17, "its length, unpadded");
	CHECK(!memcmp(b + 28, "xdp-rlctl capture\0\0\0", 20), "the value, zero-padded");
	CHECK_EQ(u32(b + 48), 0, "opt_endofopt");
	CHECK_EQ(xrl_pcapng_shb(b, 55, "xdp-rlctl capture"), 0, "a buffer too small: nothing");
	CHECK_EQ(xrl_pcapng_shb(b, sizeof(b), NULL), 28, "no option: no end of options either");
}

static void test_idb(void)
{
	uint8_t b[256];
	size_t n = xrl_pcapng_idb(b, sizeof(b), XRL_LINKTYPE_ETHERNET, 256, "d0");

	/* 16 + name (4 + 4) + tsresol (4 + 4) + end 4 + trailer 4 */
	CHECK_EQ(n, 40, "the interface's length");
	CHECK_EQ(u32(b), XRL_PCAPNG_IDB, "block type");
	CHECK_EQ(u32(b + n - 4), n, "trailing length");
	CHECK_EQ(u16(b + 8), 1, "link type Ethernet");
	CHECK_EQ(u32(b + 12), 256, "snaplen");
	CHECK_EQ(u16(b + 16), XRL_PCAPNG_OPT_IF_NAME, "if_name");
	CHECK_EQ(u16(b + 18), 2, "its length");
	CHECK(!memcmp(b + 20, "d0\0\0", 4), "padded");
	CHECK_EQ(u16(b + 24), XRL_PCAPNG_OPT_IF_TSRESOL, "if_tsresol");
	CHECK_EQ(b[28], 9, "nanoseconds");
	CHECK_EQ(u32(b + 32), 0, "end of options");
}

static void test_epb(void)
{
	uint8_t b[512], data[61];
	const char *c = "xdp-rl verdict=drop rule=7";	/* 26 bytes */
	uint64_t ts = 0x0000000123456789ULL * 1000;
	size_t n;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i + 1);
	n = xrl_pcapng_epb(b, sizeof(b), 3, ts, data, 61, 1500, XRL_PCAPNG_INBOUND, c);
	/* 28 + 64 (61 padded) + comment (4 + 28) + flags (4 + 4) + end 4 + trailer 4 */
	CHECK_EQ(n, 140, "the packet's length");
	CHECK_EQ(n % 4, 0, "a multiple of 4");
	CHECK_EQ(u32(b), XRL_PCAPNG_EPB, "block type");
	CHECK_EQ(u32(b + 4), n, "leading length");
	CHECK_EQ(u32(b + n - 4), n, "trailing length");
	CHECK_EQ(u32(b + 8), 3, "interface id");
	CHECK_EQ(((uint64_t)u32(b + 12) << 32) | u32(b + 16), ts, "the stamp, high word first");
	CHECK_EQ(u32(b + 20), 61, "captured length");
	CHECK_EQ(u32(b + 24), 1500, "original length");
	CHECK(!memcmp(b + 28, data, 61), "the data");
	CHECK(!b[89] && !b[90] && !b[91], "padded with zeros");
	CHECK_EQ(u16(b + 92), XRL_PCAPNG_OPT_COMMENT, "opt_comment");
	CHECK_EQ(u16(b + 94), 26, "its length");
	CHECK(!memcmp(b + 96, c, 26) && !b[122] && !b[123], "the comment, padded");
	CHECK_EQ(u16(b + 124), XRL_PCAPNG_OPT_EPB_FLAGS, "epb_flags");
	CHECK_EQ(u16(b + 126), 4, "its length");
	CHECK_EQ(u32(b + 128) & 3, XRL_PCAPNG_INBOUND, "inbound");
	CHECK_EQ(u32(b + 132), 0, "end of options");
	CHECK_EQ(xrl_pcapng_epb(b, 139, 3, ts, data, 61, 1500, 1, c), 0, "too small: nothing");
	/* neither comment nor flags: no options at all */
	CHECK_EQ(xrl_pcapng_epb(b, sizeof(b), 0, ts, data, 4, 4, 0, NULL), 36, "bare packet");
	CHECK_EQ(u32(b + 32), 36, "its trailer right after the data");
}

static void test_pcap(void)
{
	uint8_t b[128], data[10] = { 1, 2, 3 };
	size_t n = xrl_pcap_header(b, sizeof(b), 256, XRL_LINKTYPE_ETHERNET);

	CHECK_EQ(n, 24, "the file header");
	CHECK_EQ(u32(b), XRL_PCAP_MAGIC_NS, "nanosecond magic, host order");
	CHECK_EQ(u16(b + 4), 2, "major");
	CHECK_EQ(u16(b + 6), 4, "minor");
	CHECK_EQ(u32(b + 16), 256, "snaplen");
	CHECK_EQ(u32(b + 20), 1, "Ethernet");
	n = xrl_pcap_record(b, sizeof(b), 5 * 1000000000ULL + 42, data, 10, 60);
	CHECK_EQ(n, 26, "a record: 16 + its bytes, unpadded");
	CHECK_EQ(u32(b), 5, "seconds");
	CHECK_EQ(u32(b + 4), 42, "nanoseconds");
	CHECK_EQ(u32(b + 8), 10, "caplen");
	CHECK_EQ(u32(b + 12), 60, "len");
	CHECK_EQ(xrl_pcap_record(b, 25, 0, data, 10, 60), 0, "too small: nothing");
}

int main(int argc, char **argv)
{
	tl_init(argc, argv);
	RUN(test_shb);
	RUN(test_idb);
	RUN(test_epb);
	RUN(test_pcap);
	return tl_summary();
}
