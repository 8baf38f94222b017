/* The test world of compat/libspf2's tests (tests/zone_data.h). */
#ifndef ZONE_DATA_H
#define ZONE_DATA_H

#include "zone_layer.h"

#define A10 "AAAAAAAAAA"
#define A100 A10 A10 A10 A10 A10 A10 A10 A10 A10 A10
/* a 600-byte literal, for the macro-compiler CVE triggers */
#define LONG_LIT A100 A100 A100 A100 A100 A100

static const struct zone_rr zone_data[] = {
	{"example.com", ns_t_txt, "v=spf1 ip4:192.0.2.0/24 -all"},
	{"example.com", ns_t_mx, "mail.example.com"},
	{"mail.example.com", ns_t_a, "192.0.2.25"},
	{"soft.example", ns_t_txt, "v=spf1 ip4:192.0.2.1 ~all"},
	{"neutral.example", ns_t_txt, "v=spf1 ?all"},
	{"default.example", ns_t_txt, "v=spf1 ip4:10.0.0.1"},
	{"a.example", ns_t_txt, "v=spf1 a -all"},
	{"a.example", ns_t_a, "192.0.2.10"},
	{"mx.example", ns_t_txt, "v=spf1 mx -all"},
	{"mx.example", ns_t_mx, "mail.mx.example"},
	{"mail.mx.example", ns_t_a, "192.0.2.20"},
	{"inc.example", ns_t_txt, "v=spf1 include:example.com -all"},
	{"incnone.example", ns_t_txt, "v=spf1 include:nothing.example -all"},
	{"exp.example", ns_t_txt, "v=spf1 -all exp=explain.exp.example"},
	{"explain.exp.example", ns_t_txt, "%{i} is not one of %{d}'s servers"},
	{"redir.example", ns_t_txt, "v=spf1 redirect=example.com"},
	{"multi.example", ns_t_txt, "v=spf1 -all"},
	{"multi.example", ns_t_txt, "v=spf1 +all"},
	{"nospf.example", ns_t_txt, "hello world"},
	{"nodata.example", ns_t_a, "192.0.2.99"},
	{"tempmech.example", ns_t_txt, "v=spf1 a:timeout.example -all"},
	{"syntax.example", ns_t_txt, "v=spf1 foo -all"},
	{"badip.example", ns_t_txt, "v=spf1 ip4:300.1.1.1 -all"},
	/* a mechanism name past the 64 bytes of a term a problem text quotes */
	{"longname.example", ns_t_txt,
	 "v=spf1 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!x -all"},
	{"six.example", ns_t_txt, "v=spf1 ip6:2001:db8::/32 -all"},
	{"mail.six.example", ns_t_aaaa, "2001:db8::25"},
	{"helo.example", ns_t_txt, "v=spf1 a -all"},
	{"helo.example", ns_t_a, "192.0.2.30"},
	{"void.example", ns_t_txt, "v=spf1 a:v1.nx.example a:v2.nx.example a:v3.nx.example -all"},
	{"ptr.example", ns_t_txt, "v=spf1 ptr -all"},
	{"10.2.0.192.in-addr.arpa", ns_t_ptr, "a.example"},
	{"exists.example", ns_t_txt, "v=spf1 exists:%{l}.%{o}.ex.example -all"},
	{"alice.exists.example.ex.example", ns_t_a, "127.0.0.2"},
	/* CVE triggers (run against our library only) */
	{"cve20314.example", ns_t_txt, "v=spf1 -all exp=e.cve20314.example"},
	{"e.cve20314.example", ns_t_txt, LONG_LIT "%{s}" LONG_LIT "%{i}" LONG_LIT},
	{"cve33912.example", ns_t_txt,
	 "v=spf1 exists:%{L}.%{S}.x.example -all exp=e.cve33912.example"},
	{"e.cve33912.example", ns_t_txt, "%{L} %{S} %{H}"},
	{"cve33913.example", ns_t_txt, "v=spf1 exists:%{L}%{L}%{L}%{L}.x.example -all"},
	{"cve42118.example", ns_t_txt,
	 "v=spf1 exists:" LONG_LIT "%{d}%{i}%{s}%{l}%{o}" LONG_LIT "%{d}.x.example -all"},
	{"amp.example", ns_t_txt,
	 "v=spf1 include:i0.amp.example include:i1.amp.example "
	 "include:i2.amp.example include:i3.amp.example include:i4.amp.example "
	 "include:i5.amp.example include:i6.amp.example include:i7.amp.example "
	 "include:i8.amp.example include:i9.amp.example -all"},
	{"i0.amp.example", ns_t_txt,
	 "v=spf1 a:h0.i0.amp.example a:h1.i0.amp.example a:h2.i0.amp.example "
	 "a:h3.i0.amp.example a:h4.i0.amp.example a:h5.i0.amp.example "
	 "a:h6.i0.amp.example a:h7.i0.amp.example a:h8.i0.amp.example ?all"},
	{"h0.i0.amp.example", ns_t_a, "198.51.100.1"},
	{"h1.i0.amp.example", ns_t_a, "198.51.100.2"},
	{"h2.i0.amp.example", ns_t_a, "198.51.100.3"},
	{"h3.i0.amp.example", ns_t_a, "198.51.100.4"},
	{"h4.i0.amp.example", ns_t_a, "198.51.100.5"},
	{"h5.i0.amp.example", ns_t_a, "198.51.100.6"},
	{"h6.i0.amp.example", ns_t_a, "198.51.100.7"},
	{"h7.i0.amp.example", ns_t_a, "198.51.100.8"},
	{"h8.i0.amp.example", ns_t_a, "198.51.100.9"},
	{"i1.amp.example", ns_t_txt,
	 "v=spf1 a:h0.i1.amp.example a:h1.i1.amp.example a:h2.i1.amp.example "
	 "a:h3.i1.amp.example a:h4.i1.amp.example a:h5.i1.amp.example "
	 "a:h6.i1.amp.example a:h7.i1.amp.example a:h8.i1.amp.example ?all"},
	{"h0.i1.amp.example", ns_t_a, "198.51.100.1"},
	{"h1.i1.amp.example", ns_t_a, "198.51.100.2"},
	{"h2.i1.amp.example", ns_t_a, "198.51.100.3"},
	{"h3.i1.amp.example", ns_t_a, "198.51.100.4"},
	{"h4.i1.amp.example", ns_t_a, "198.51.100.5"},
	{"h5.i1.amp.example", ns_t_a, "198.51.100.6"},
	{"h6.i1.amp.example", ns_t_a, "198.51.100.7"},
	{"h7.i1.amp.example", ns_t_a, "198.51.100.8"},
	{"h8.i1.amp.example", ns_t_a, "198.51.100.9"},
	{"i2.amp.example", ns_t_txt,
	 "v=spf1 a:h0.i2.amp.example a:h1.i2.amp.example a:h2.i2.amp.example "
	 "a:h3.i2.amp.example a:h4.i2.amp.example a:h5.i2.amp.example "
	 "a:h6.i2.amp.example a:h7.i2.amp.example a:h8.i2.amp.example ?all"},
	{"h0.i2.amp.example", ns_t_a, "198.51.100.1"},
	{"h1.i2.amp.example", ns_t_a, "198.51.100.2"},
	{"h2.i2.amp.example", ns_t_a, "198.51.100.3"},
	{"h3.i2.amp.example", ns_t_a, "198.51.100.4"},
	{"h4.i2.amp.example", ns_t_a, "198.51.100.5"},
	{"h5.i2.amp.example", ns_t_a, "198.51.100.6"},
	{"h6.i2.amp.example", ns_t_a, "198.51.100.7"},
	{"h7.i2.amp.example", ns_t_a, "198.51.100.8"},
	{"h8.i2.amp.example", ns_t_a, "198.51.100.9"},
	{"i3.amp.example", ns_t_txt,
	 "v=spf1 a:h0.i3.amp.example a:h1.i3.amp.example a:h2.i3.amp.example "
	 "a:h3.i3.amp.example a:h4.i3.amp.example a:h5.i3.amp.example "
	 "a:h6.i3.amp.example a:h7.i3.amp.example a:h8.i3.amp.example ?all"},
	{"h0.i3.amp.example", ns_t_a, "198.51.100.1"},
	{"h1.i3.amp.example", ns_t_a, "198.51.100.2"},
	{"h2.i3.amp.example", ns_t_a, "198.51.100.3"},
	{"h3.i3.amp.example", ns_t_a, "198.51.100.4"},
	{"h4.i3.amp.example", ns_t_a, "198.51.100.5"},
	{"h5.i3.amp.example", ns_t_a, "198.51.100.6"},
	{"h6.i3.amp.example", ns_t_a, "198.51.100.7"},
	{"h7.i3.amp.example", ns_t_a, "198.51.100.8"},
	{"h8.i3.amp.example", ns_t_a, "198.51.100.9"},
	{"i4.amp.example", ns_t_txt,
	 "v=spf1 a:h0.i4.amp.example a:h1.i4.amp.example a:h2.i4.amp.example "
	 "a:h3.i4.amp.example a:h4.i4.amp.example a:h5.i4.amp.example "
	 "a:h6.i4.amp.example a:h7.i4.amp.example a:h8.i4.amp.example ?all"},
	{"h0.i4.amp.example", ns_t_a, "198.51.100.1"},
	{"h1.i4.amp.example", ns_t_a, "198.51.100.2"},
	{"h2.i4.amp.example", ns_t_a, "198.51.100.3"},
	{"h3.i4.amp.example", ns_t_a, "198.51.100.4"},
	{"h4.i4.amp.example", ns_t_a, "198.51.100.5"},
	{"h5.i4.amp.example", ns_t_a, "198.51.100.6"},
	{"h6.i4.amp.example", ns_t_a, "198.51.100.7"},
	{"h7.i4.amp.example", ns_t_a, "198.51.100.8"},
	{"h8.i4.amp.example", ns_t_a, "198.51.100.9"},
	{"i5.amp.example", ns_t_txt,
	 "v=spf1 a:h0.i5.amp.example a:h1.i5.amp.example a:h2.i5.amp.example "
	 "a:h3.i5.amp.example a:h4.i5.amp.example a:h5.i5.amp.example "
	 "a:h6.i5.amp.example a:h7.i5.amp.example a:h8.i5.amp.example ?all"},
	{"h0.i5.amp.example", ns_t_a, "198.51.100.1"},
	{"h1.i5.amp.example", ns_t_a, "198.51.100.2"},
	{"h2.i5.amp.example", ns_t_a, "198.51.100.3"},
	{"h3.i5.amp.example", ns_t_a, "198.51.100.4"},
	{"h4.i5.amp.example", ns_t_a, "198.51.100.5"},
	{"h5.i5.amp.example", ns_t_a, "198.51.100.6"},
	{"h6.i5.amp.example", ns_t_a, "198.51.100.7"},
	{"h7.i5.amp.example", ns_t_a, "198.51.100.8"},
	{"h8.i5.amp.example", ns_t_a, "198.51.100.9"},
	{"i6.amp.example", ns_t_txt,
	 "v=spf1 a:h0.i6.amp.example a:h1.i6.amp.example a:h2.i6.amp.example "
	 "a:h3.i6.amp.example a:h4.i6.amp.example a:h5.i6.amp.example "
	 "a:h6.i6.amp.example a:h7.i6.amp.example a:h8.i6.amp.example ?all"},
	{"h0.i6.amp.example", ns_t_a, "198.51.100.1"},
	{"h1.i6.amp.example", ns_t_a, "198.51.100.2"},
	{"h2.i6.amp.example", ns_t_a, "198.51.100.3"},
	{"h3.i6.amp.example", ns_t_a, "198.51.100.4"},
	{"h4.i6.amp.example", ns_t_a, "198.51.100.5"},
	{"h5.i6.amp.example", ns_t_a, "198.51.100.6"},
	{"h6.i6.amp.example", ns_t_a, "198.51.100.7"},
	{"h7.i6.amp.example", ns_t_a, "198.51.100.8"},
	{"h8.i6.amp.example", ns_t_a, "198.51.100.9"},
	{"i7.amp.example", ns_t_txt,
	 "v=spf1 a:h0.i7.amp.example a:h1.i7.amp.example a:h2.i7.amp.example "
	 "a:h3.i7.amp.example a:h4.i7.amp.example a:h5.i7.amp.example "
	 "a:h6.i7.amp.example a:h7.i7.amp.example a:h8.i7.amp.example ?all"},
	{"h0.i7.amp.example", ns_t_a, "198.51.100.1"},
	{"h1.i7.amp.example", ns_t_a, "198.51.100.2"},
	{"h2.i7.amp.example", ns_t_a, "198.51.100.3"},
	{"h3.i7.amp.example", ns_t_a, "198.51.100.4"},
	{"h4.i7.amp.example", ns_t_a, "198.51.100.5"},
	{"h5.i7.amp.example", ns_t_a, "198.51.100.6"},
	{"h6.i7.amp.example", ns_t_a, "198.51.100.7"},
	{"h7.i7.amp.example", ns_t_a, "198.51.100.8"},
	{"h8.i7.amp.example", ns_t_a, "198.51.100.9"},
	{"i8.amp.example", ns_t_txt,
	 "v=spf1 a:h0.i8.amp.example a:h1.i8.amp.example a:h2.i8.amp.example "
	 "a:h3.i8.amp.example a:h4.i8.amp.example a:h5.i8.amp.example "
	 "a:h6.i8.amp.example a:h7.i8.amp.example a:h8.i8.amp.example ?all"},
	{"h0.i8.amp.example", ns_t_a, "198.51.100.1"},
	{"h1.i8.amp.example", ns_t_a, "198.51.100.2"},
	{"h2.i8.amp.example", ns_t_a, "198.51.100.3"},
	{"h3.i8.amp.example", ns_t_a, "198.51.100.4"},
	{"h4.i8.amp.example", ns_t_a, "198.51.100.5"},
	{"h5.i8.amp.example", ns_t_a, "198.51.100.6"},
	{"h6.i8.amp.example", ns_t_a, "198.51.100.7"},
	{"h7.i8.amp.example", ns_t_a, "198.51.100.8"},
	{"h8.i8.amp.example", ns_t_a, "198.51.100.9"},
	{"i9.amp.example", ns_t_txt,
	 "v=spf1 a:h0.i9.amp.example a:h1.i9.amp.example a:h2.i9.amp.example "
	 "a:h3.i9.amp.example a:h4.i9.amp.example a:h5.i9.amp.example "
	 "a:h6.i9.amp.example a:h7.i9.amp.example a:h8.i9.amp.example ?all"},
	{"h0.i9.amp.example", ns_t_a, "198.51.100.1"},
	{"h1.i9.amp.example", ns_t_a, "198.51.100.2"},
	{"h2.i9.amp.example", ns_t_a, "198.51.100.3"},
	{"h3.i9.amp.example", ns_t_a, "198.51.100.4"},
	{"h4.i9.amp.example", ns_t_a, "198.51.100.5"},
	{"h5.i9.amp.example", ns_t_a, "198.51.100.6"},
	{"h6.i9.amp.example", ns_t_a, "198.51.100.7"},
	{"h7.i9.amp.example", ns_t_a, "198.51.100.8"},
	{"h8.i9.amp.example", ns_t_a, "198.51.100.9"},
};

#define ZONE_COUNT (sizeof(zone_data) / sizeof(zone_data[0]))

#endif
