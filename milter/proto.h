/*
 * The milter protocol, version 6, as Sendmail and Postfix speak it
 * (Sendmail's libmilter/mfdef.h; Postfix src/milter/milter8.c is the MTA
 * side): every packet is a 4-byte big-endian length (command byte plus
 * data), the command byte, the data. Pure functions over bytes: no I/O,
 * no state. The MTA is the peer, and nothing it sends is trusted: every
 * parse is bounded by the packet, and a malformed packet is refused or
 * read for what is well-formed in it, never a crash. Not an API.
 */
#ifndef SPFKIT_MILTER_PROTO_H
#define SPFKIT_MILTER_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define SPFKIT_MILTER_VERSION 6
/* Longest data of one packet: libmilter's MILTER_MAX_DATA_SIZE (64 KiB - 1).
 * A header field, a macro packet or a body chunk over it closes the
 * connection, as with libmilter; we never negotiate larger packets. */
#define SPFKIT_MILTER_DATA_MAX 65535u
#define SPFKIT_MILTER_HEAD 4u /* the length field */

/* Commands (MTA -> milter). */
enum {
	SPFKIT_MILTER_C_ABORT = 'A', SPFKIT_MILTER_C_BODY = 'B', SPFKIT_MILTER_C_CONNECT = 'C',
	SPFKIT_MILTER_C_MACRO = 'D', SPFKIT_MILTER_C_EOB = 'E', SPFKIT_MILTER_C_HELO = 'H',
	SPFKIT_MILTER_C_QUIT_NC = 'K', SPFKIT_MILTER_C_HEADER = 'L', SPFKIT_MILTER_C_MAIL = 'M',
	SPFKIT_MILTER_C_EOH = 'N', SPFKIT_MILTER_C_OPTNEG = 'O', SPFKIT_MILTER_C_QUIT = 'Q',
	SPFKIT_MILTER_C_RCPT = 'R', SPFKIT_MILTER_C_DATA = 'T', SPFKIT_MILTER_C_UNKNOWN = 'U',
};

/* Replies (milter -> MTA). */
enum {
	SPFKIT_MILTER_R_ACCEPT = 'a', SPFKIT_MILTER_R_CONTINUE = 'c', SPFKIT_MILTER_R_REJECT = 'r',
	SPFKIT_MILTER_R_TEMPFAIL = 't', SPFKIT_MILTER_R_REPLYCODE = 'y',
	SPFKIT_MILTER_R_ADDHEADER = 'h', SPFKIT_MILTER_R_INSHEADER = 'i',
	SPFKIT_MILTER_R_CHGHEADER = 'm', SPFKIT_MILTER_R_OPTNEG = 'O',
};

/* Actions the milter may take (negotiated). */
#define SPFKIT_MILTER_F_ADDHDRS 0x01u
#define SPFKIT_MILTER_F_CHGHDRS 0x10u

/* Protocol steps: what the MTA may leave out, or not wait for. */
#define SPFKIT_MILTER_P_NORCPT 0x08u
#define SPFKIT_MILTER_P_NOBODY 0x10u
#define SPFKIT_MILTER_P_NOEOH 0x40u
#define SPFKIT_MILTER_P_NR_HDR 0x80u
#define SPFKIT_MILTER_P_NOUNKNOWN 0x100u
#define SPFKIT_MILTER_P_NODATA 0x200u

/*
 * Where the next packet in p[0..len) ends: 1 with *size the bytes of
 * the whole packet (length field included) when it is all there (an
 * empty packet, length 0, has no command byte: *size is 4); 0 when more
 * bytes are needed; -1 when its length is over 1 + SPFKIT_MILTER_DATA_MAX,
 * *size then the announced length.
 */
int spfkit__milter_frame(const unsigned char *p, size_t len, uint32_t *size);

/* The 5 bytes before a reply's data: length (1 + data_len) and command. */
void spfkit__milter_put_head(unsigned char out[5], char cmd, size_t data_len);

/* A big-endian 32-bit number at p (4 bytes there). */
uint32_t spfkit__milter_get32(const unsigned char *p);
void spfkit__milter_put32(unsigned char *p, uint32_t v);

/* Option negotiation (O): version, actions, protocol steps. 0, or -1 (under 12 bytes). */
int spfkit__milter_optneg_parse(const unsigned char *d, size_t n, uint32_t *version,
				uint32_t *actions, uint32_t *steps);

/*
 * The NUL-terminated strings at the start of d[0..n): up to max of them
 * into s[] (each NUL-terminated in place, length in len[] if not NULL).
 * Bytes after the last NUL are not a string. The count.
 */
size_t spfkit__milter_strings(const unsigned char *d, size_t n, const char **s, size_t *len,
			      size_t max);

/*
 * MAIL FROM (M): does the packet's ESMTP parameter list, the strings
 * after the address, hold SMTPUTF8 (RFC 6531 §3.4; any case)? Postfix
 * and Sendmail pass the client's parameters as it sent them. 1 or 0.
 */
int spfkit__milter_mail_smtputf8(const unsigned char *d, size_t n);

/* Connection information (C): hostname NUL, family, then port and address for '4' '6' 'L'. */
struct spfkit__milter_connect {
	const char *hostname;
	char family;          /* '4', '6', 'L' (UNIX), 'U' (unknown) */
	unsigned port;
	const char *addr;     /* NUL-terminated; "" for 'U' */
	size_t addr_len;
};

/* 0, or -1 when malformed (no NUL after the hostname or the address, no port, unknown family). */
int spfkit__milter_connect_parse(const unsigned char *d, size_t n, struct spfkit__milter_connect *c);

#endif
