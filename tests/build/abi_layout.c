/*
 * The layout of every public struct of the headers in include/spfkit/,
 * as this compiler lays it out: "struct NAME size N" and "NAME.FIELD offset N"
 * for every field. The test `abi-layout` (tests/build/meson.build)
 * compares it with tests/build/abi-x86_64.txt on x86_64 hosts; the
 * structs are append-only (include/spfkit/common.h), so the only
 * acceptable diff is new lines at the end of a struct and a larger size.
 * A new public struct is added here; the test also fails when a header
 * defines a struct this program does not print.
 * Regenerate the reference with tools/update-abi.sh BUILD_DIR.
 */
#include <stddef.h>
#include <stdio.h>

#include <spfkit/spfkit.h>

#define S(name) printf("struct %s size %zu\n", #name, sizeof(struct name))
#define F(name, field) printf("%s.%s offset %zu\n", #name, #field, offsetof(struct name, field))

int main(void)
{
	/* common.h */
	S(spfkit_allocator);
	F(spfkit_allocator, alloc);
	F(spfkit_allocator, realloc);
	F(spfkit_allocator, free);
	F(spfkit_allocator, user);

	/* resolver.h */
	S(spfkit_dns_rr);
	F(spfkit_dns_rr, type);
	F(spfkit_dns_rr, pref);
	F(spfkit_dns_rr, ttl);
	F(spfkit_dns_rr, data);
	F(spfkit_dns_rr, len);
	S(spfkit_dns_answer);
	F(spfkit_dns_answer, status);
	F(spfkit_dns_answer, ttl);
	F(spfkit_dns_answer, rrs);
	F(spfkit_dns_answer, count);
	F(spfkit_dns_answer, detail);
	S(spfkit_resolver_ops);
	F(spfkit_resolver_ops, submit);
	F(spfkit_resolver_ops, cancel);
	F(spfkit_resolver_ops, wait);
	F(spfkit_resolver_ops, destroy);
	S(spfkit_resolver);
	F(spfkit_resolver, ops);
	F(spfkit_resolver, impl);

	/* record.h */
	S(spfkit_macro_piece);
	F(spfkit_macro_piece, kind);
	F(spfkit_macro_piece, letter);
	F(spfkit_macro_piece, url_escape);
	F(spfkit_macro_piece, reverse);
	F(spfkit_macro_piece, digits);
	F(spfkit_macro_piece, delims);
	F(spfkit_macro_piece, text);
	F(spfkit_macro_piece, len);
	S(spfkit_macro_string);
	F(spfkit_macro_string, pieces);
	F(spfkit_macro_string, count);
	F(spfkit_macro_string, letters);
	F(spfkit_macro_string, src);
	F(spfkit_macro_string, src_len);
	S(spfkit_term);
	F(spfkit_term, is_modifier);
	F(spfkit_term, qualifier);
	F(spfkit_term, mech);
	F(spfkit_term, mod);
	F(spfkit_term, has_domain);
	F(spfkit_term, cidr4);
	F(spfkit_term, cidr6);
	F(spfkit_term, ip);
	F(spfkit_term, domain);
	F(spfkit_term, name);
	F(spfkit_term, name_len);
	F(spfkit_term, offset);
	F(spfkit_term, len);
	S(spfkit_record);
	F(spfkit_record, text);
	F(spfkit_record, len);
	F(spfkit_record, terms);
	F(spfkit_record, count);
	F(spfkit_record, redirect);
	F(spfkit_record, exp);
	F(spfkit_record, dns_terms);
	S(spfkit_parse_error);
	F(spfkit_parse_error, offset);
	F(spfkit_parse_error, term_offset);
	F(spfkit_parse_error, term_len);
	F(spfkit_parse_error, rule);
	F(spfkit_parse_error, section);

	/* eval.h */
	S(spfkit_limits);
	F(spfkit_limits, dns_terms);
	F(spfkit_limits, void_lookups);
	F(spfkit_limits, mx_names);
	F(spfkit_limits, ptr_names);
	S(spfkit_ip);
	F(spfkit_ip, family);
	F(spfkit_ip, addr);
	S(spfkit_trace_event);
	F(spfkit_trace_event, kind);
	F(spfkit_trace_event, depth);
	F(spfkit_trace_event, domain);
	F(spfkit_trace_event, name);
	F(spfkit_trace_event, qtype);
	F(spfkit_trace_event, query_id);
	F(spfkit_trace_event, answer);
	F(spfkit_trace_event, text);
	F(spfkit_trace_event, text_len);
	F(spfkit_trace_event, matched);
	F(spfkit_trace_event, result);
	F(spfkit_trace_event, dns_terms);
	F(spfkit_trace_event, void_lookups);
	S(spfkit_config);
	F(spfkit_config, size);
	F(spfkit_config, alloc);
	F(spfkit_config, default_explanation);
	F(spfkit_config, receiver);
	F(spfkit_config, limits);
	F(spfkit_config, no_lookahead);
	F(spfkit_config, record_cache_size);
	F(spfkit_config, time_budget_ms);
	F(spfkit_config, record_cache_bytes);
	F(spfkit_config, no_record_cache);
	F(spfkit_config, record_memo);
	S(spfkit_request);
	F(spfkit_request, size);
	F(spfkit_request, ip);
	F(spfkit_request, sender);
	F(spfkit_request, sender_len);
	F(spfkit_request, helo);
	F(spfkit_request, helo_len);
	F(spfkit_request, identity);
	F(spfkit_request, now);
	F(spfkit_request, trace);
	F(spfkit_request, trace_arg);
	S(spfkit_result);
	F(spfkit_result, code);
	F(spfkit_result, explanation);
	F(spfkit_result, mechanism);
	F(spfkit_result, domain);
	F(spfkit_result, problem);
	F(spfkit_result, identity_domain);
	F(spfkit_result, sender);
	F(spfkit_result, helo);
	F(spfkit_result, client_ip);
	F(spfkit_result, receiver);
	F(spfkit_result, identity);
	F(spfkit_result, dns_terms);
	F(spfkit_result, void_lookups);
	F(spfkit_result, queries);
	F(spfkit_result, depth);
	F(spfkit_result, memo_answers);
	F(spfkit_result, planned);
	F(spfkit_result, sender_ascii);
	F(spfkit_result, helo_ascii);
	F(spfkit_result, reason);
	F(spfkit_result, reason_domain);
	F(spfkit_result, reason_term);
	F(spfkit_result, reason_term_len);
	F(spfkit_result, reason_term_offset);
	S(spfkit_question);
	F(spfkit_question, id);
	F(spfkit_question, type);
	F(spfkit_question, name);
	F(spfkit_question, name_len);

	/* output.h */
	S(spfkit_smtp_reply);
	F(spfkit_smtp_reply, code);
	F(spfkit_smtp_reply, enhanced);

	/* cares.h */
	S(spfkit_cares_options);
	F(spfkit_cares_options, size);
	F(spfkit_cares_options, servers);
	F(spfkit_cares_options, timeout_ms);
	F(spfkit_cares_options, tries);
	F(spfkit_cares_options, edns_udp_size);
	S(spfkit_cares_fd);
	F(spfkit_cares_fd, fd);
	F(spfkit_cares_fd, events);

	/* cache.h */
	S(spfkit_cache_options);
	F(spfkit_cache_options, size);
	F(spfkit_cache_options, max_bytes);
	F(spfkit_cache_options, max_ttl);
	F(spfkit_cache_options, max_negative_ttl);
	F(spfkit_cache_options, clock);
	F(spfkit_cache_options, clock_arg);
	S(spfkit_cache_stats);
	F(spfkit_cache_stats, hits);
	F(spfkit_cache_stats, misses);
	F(spfkit_cache_stats, inserts);
	F(spfkit_cache_stats, evictions);
	F(spfkit_cache_stats, expirations);
	F(spfkit_cache_stats, entries);
	F(spfkit_cache_stats, bytes);
	F(spfkit_cache_stats, max_bytes);

	/* publish.h */
	S(spfkit_lint_options);
	F(spfkit_lint_options, size);
	F(spfkit_lint_options, domain);
	F(spfkit_lint_options, domain_len);
	F(spfkit_lint_options, record);
	F(spfkit_lint_options, record_len);
	F(spfkit_lint_options, time_limit_s);
	F(spfkit_lint_options, tree);
	F(spfkit_lint_options, strings);
	F(spfkit_lint_options, string_lens);
	F(spfkit_lint_options, nstrings);
	S(spfkit_tree_record);
	F(spfkit_tree_record, text);
	F(spfkit_tree_record, len);
	S(spfkit_lint_cost);
	F(spfkit_lint_cost, term);
	F(spfkit_lint_cost, offset);
	F(spfkit_lint_cost, cost);
	F(spfkit_lint_cost, total);
	F(spfkit_lint_cost, after_flatten);
	S(spfkit_lint_summary);
	F(spfkit_lint_summary, domain);
	F(spfkit_lint_summary, record);
	F(spfkit_lint_summary, record_len);
	F(spfkit_lint_summary, dns_terms);
	F(spfkit_lint_summary, void_lookups_ipv4);
	F(spfkit_lint_summary, void_lookups_ipv6);
	F(spfkit_lint_summary, permerror_ipv4);
	F(spfkit_lint_summary, permerror_ipv6);
	F(spfkit_lint_summary, dynamic);
	F(spfkit_lint_summary, loop);
	F(spfkit_lint_summary, records);
	F(spfkit_lint_summary, errors);
	F(spfkit_lint_summary, warnings);
	F(spfkit_lint_summary, notices);
	F(spfkit_lint_summary, status);
	F(spfkit_lint_summary, tree_status);
	F(spfkit_lint_summary, stopped);
	F(spfkit_lint_summary, unanswered);
	F(spfkit_lint_summary, spf_records);
	F(spfkit_lint_summary, nspf_records);
	F(spfkit_lint_summary, unevaluated);
	F(spfkit_lint_summary, dns_terms_once_fixed);
	F(spfkit_lint_summary, flatten_checked);
	F(spfkit_lint_summary, dns_terms_after_flatten);
	F(spfkit_lint_summary, flatten_fixes);
	F(spfkit_lint_summary, flatten_note);
	F(spfkit_lint_summary, costs);
	F(spfkit_lint_summary, ncosts);
	F(spfkit_lint_summary, provider_errors);
	F(spfkit_lint_summary, provider_warnings);
	F(spfkit_lint_summary, provider_notices);
	S(spfkit_lint_finding);
	F(spfkit_lint_finding, id);
	F(spfkit_lint_finding, severity);
	F(spfkit_lint_finding, domain);
	F(spfkit_lint_finding, term);
	F(spfkit_lint_finding, offset);
	F(spfkit_lint_finding, message);
	F(spfkit_lint_finding, fix);
	F(spfkit_lint_finding, section);
	F(spfkit_lint_finding, provider);
	F(spfkit_lint_finding, reason);
	S(spfkit_tree_void);
	F(spfkit_tree_void, type);
	F(spfkit_tree_void, name);
	F(spfkit_tree_void, ipv4);
	F(spfkit_tree_void, ipv6);
	S(spfkit_tree_node);
	F(spfkit_tree_node, domain);
	F(spfkit_tree_node, how);
	F(spfkit_tree_node, via);
	F(spfkit_tree_node, via_qualifier);
	F(spfkit_tree_node, record);
	F(spfkit_tree_node, record_len);
	F(spfkit_tree_node, ttl);
	F(spfkit_tree_node, has_ttl);
	F(spfkit_tree_node, parsed);
	F(spfkit_tree_node, lookups_here);
	F(spfkit_tree_node, lookups_subtree);
	F(spfkit_tree_node, voids_ipv4_here);
	F(spfkit_tree_node, voids_ipv6_here);
	F(spfkit_tree_node, voids_ipv4_subtree);
	F(spfkit_tree_node, voids_ipv6_subtree);
	F(spfkit_tree_node, voids);
	F(spfkit_tree_node, nvoids);
	F(spfkit_tree_node, dynamic);
	F(spfkit_tree_node, ndynamic);
	F(spfkit_tree_node, ipv4_here);
	F(spfkit_tree_node, ipv6_here);
	F(spfkit_tree_node, ipv4_subtree);
	F(spfkit_tree_node, ipv6_subtree);
	F(spfkit_tree_node, plus_all);
	F(spfkit_tree_node, problem);
	F(spfkit_tree_node, error);
	F(spfkit_tree_node, loop);
	F(spfkit_tree_node, repeated);
	F(spfkit_tree_node, child);
	F(spfkit_tree_node, next);
	F(spfkit_tree_node, other_records);
	F(spfkit_tree_node, nother_records);
	return ferror(stdout) || fflush(stdout) != 0;
}
