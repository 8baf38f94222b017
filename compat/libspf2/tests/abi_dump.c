/*
 * Prints the size and offset of every libspf2 struct field programs
 * touch, and every enum and constant value, one per line. Built twice:
 * against Debian's <spf2/spf.h> and against compat/libspf2/include;
 * abi_compare.py wants the two listings equal.
 */
#include <stddef.h>
#include <stdio.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <spf2/spf.h>
#include <spf2/spf_dns_cache.h>
#include <spf2/spf_dns_resolv.h>

#define SIZE(t) printf("sizeof %s %zu align %zu\n", #t, sizeof(t), _Alignof(t))
#define OFF(t, f) \
	printf("offsetof %s.%s %zu size %zu\n", #t, #f, offsetof(t, f), sizeof(((t *)0)->f))
#define VAL(v) printf("value %s %ld\n", #v, (long)(v))
#define STR(v) printf("string %s \"%s\"\n", #v, v)

int main(void)
{
	SIZE(SPF_response_t);
	OFF(SPF_response_t, spf_request);
	OFF(SPF_response_t, spf_record_exp);
	OFF(SPF_response_t, result);
	OFF(SPF_response_t, reason);
	OFF(SPF_response_t, err);
	OFF(SPF_response_t, received_spf);
	OFF(SPF_response_t, received_spf_value);
	OFF(SPF_response_t, header_comment);
	OFF(SPF_response_t, smtp_comment);
	OFF(SPF_response_t, explanation);
	OFF(SPF_response_t, errors);
	OFF(SPF_response_t, errors_size);
	OFF(SPF_response_t, errors_length);
	OFF(SPF_response_t, num_errors);
	OFF(SPF_response_t, num_dns_mech);

	SIZE(SPF_error_t);
	OFF(SPF_error_t, code);
	OFF(SPF_error_t, message);
	OFF(SPF_error_t, is_error);

	SIZE(SPF_request_t);
	OFF(SPF_request_t, spf_server);
	OFF(SPF_request_t, client_ver);
	OFF(SPF_request_t, ipv4);
	OFF(SPF_request_t, ipv6);
	OFF(SPF_request_t, env_from);
	OFF(SPF_request_t, helo_dom);
	OFF(SPF_request_t, rcpt_to_dom);
	OFF(SPF_request_t, use_local_policy);
	OFF(SPF_request_t, use_helo);
	OFF(SPF_request_t, env_from_lp);
	OFF(SPF_request_t, env_from_dp);
	OFF(SPF_request_t, client_dom);
	OFF(SPF_request_t, cur_dom);

	SIZE(SPF_server_t);
	OFF(SPF_server_t, resolver);
	OFF(SPF_server_t, local_policy);
	OFF(SPF_server_t, explanation);
	OFF(SPF_server_t, rec_dom);
	OFF(SPF_server_t, max_dns_mech);
	OFF(SPF_server_t, max_dns_ptr);
	OFF(SPF_server_t, max_dns_mx);
	OFF(SPF_server_t, sanitize);
	OFF(SPF_server_t, debug);
	OFF(SPF_server_t, destroy_resolver);

	SIZE(SPF_dns_server_t);
	OFF(SPF_dns_server_t, destroy);
	OFF(SPF_dns_server_t, lookup);
	OFF(SPF_dns_server_t, get_spf);
	OFF(SPF_dns_server_t, get_exp);
	OFF(SPF_dns_server_t, add_cache);
	OFF(SPF_dns_server_t, layer_below);
	OFF(SPF_dns_server_t, name);
	OFF(SPF_dns_server_t, debug);
	OFF(SPF_dns_server_t, hook);

	SIZE(SPF_dns_rr_t);
	OFF(SPF_dns_rr_t, domain);
	OFF(SPF_dns_rr_t, domain_buf_len);
	OFF(SPF_dns_rr_t, rr_type);
	OFF(SPF_dns_rr_t, num_rr);
	OFF(SPF_dns_rr_t, rr);
	OFF(SPF_dns_rr_t, rr_buf_len);
	OFF(SPF_dns_rr_t, rr_buf_num);
	OFF(SPF_dns_rr_t, ttl);
	OFF(SPF_dns_rr_t, utc_ttl);
	OFF(SPF_dns_rr_t, herrno);
	OFF(SPF_dns_rr_t, hook);
	OFF(SPF_dns_rr_t, source);

	SIZE(SPF_dns_rr_data_t);
	OFF(SPF_dns_rr_data_t, a);
	OFF(SPF_dns_rr_data_t, ptr);
	OFF(SPF_dns_rr_data_t, mx);
	OFF(SPF_dns_rr_data_t, txt);
	OFF(SPF_dns_rr_data_t, aaaa);
	SIZE(SPF_dns_stat_t);
	SIZE(SPF_result_t);
	SIZE(SPF_reason_t);
	SIZE(SPF_errcode_t);
	SIZE(SPF_server_dnstype_t);

	VAL(SPF_RESULT_INVALID);
	VAL(SPF_RESULT_NEUTRAL);
	VAL(SPF_RESULT_PASS);
	VAL(SPF_RESULT_FAIL);
	VAL(SPF_RESULT_SOFTFAIL);
	VAL(SPF_RESULT_NONE);
	VAL(SPF_RESULT_TEMPERROR);
	VAL(SPF_RESULT_PERMERROR);
	VAL(SPF_REASON_NONE);
	VAL(SPF_REASON_FAILURE);
	VAL(SPF_REASON_LOCALHOST);
	VAL(SPF_REASON_LOCAL_POLICY);
	VAL(SPF_REASON_MECH);
	VAL(SPF_REASON_DEFAULT);
	VAL(SPF_REASON_2MX);
	VAL(SPF_E_SUCCESS);
	VAL(SPF_E_NO_MEMORY);
	VAL(SPF_E_NOT_SPF);
	VAL(SPF_E_SYNTAX);
	VAL(SPF_E_MOD_W_PREF);
	VAL(SPF_E_INVALID_CHAR);
	VAL(SPF_E_UNKNOWN_MECH);
	VAL(SPF_E_INVALID_OPT);
	VAL(SPF_E_INVALID_CIDR);
	VAL(SPF_E_MISSING_OPT);
	VAL(SPF_E_INTERNAL_ERROR);
	VAL(SPF_E_INVALID_ESC);
	VAL(SPF_E_INVALID_VAR);
	VAL(SPF_E_BIG_SUBDOM);
	VAL(SPF_E_INVALID_DELIM);
	VAL(SPF_E_BIG_STRING);
	VAL(SPF_E_BIG_MECH);
	VAL(SPF_E_BIG_MOD);
	VAL(SPF_E_BIG_DNS);
	VAL(SPF_E_INVALID_IP4);
	VAL(SPF_E_INVALID_IP6);
	VAL(SPF_E_INVALID_PREFIX);
	VAL(SPF_E_RESULT_UNKNOWN);
	VAL(SPF_E_UNINIT_VAR);
	VAL(SPF_E_MOD_NOT_FOUND);
	VAL(SPF_E_NOT_CONFIG);
	VAL(SPF_E_DNS_ERROR);
	VAL(SPF_E_BAD_HOST_IP);
	VAL(SPF_E_BAD_HOST_TLD);
	VAL(SPF_E_MECH_AFTER_ALL);
	VAL(SPF_E_INCLUDE_RETURNED_NONE);
	VAL(SPF_E_RECURSIVE);
	VAL(SPF_E_MULTIPLE_RECORDS);
	VAL(SPF_DNS_RESOLV);
	VAL(SPF_DNS_CACHE);
	VAL(SPF_DNS_ZONE);
	/* the DNS types and h_errno values layers use */
	VAL(ns_t_invalid);
	VAL(ns_t_a);
	VAL(ns_t_mx);
	VAL(ns_t_ptr);
	VAL(ns_t_txt);
	VAL(ns_t_aaaa);
	VAL(ns_t_spf);
	VAL(ns_t_any);
	VAL(NETDB_SUCCESS);
	VAL(HOST_NOT_FOUND);
	VAL(TRY_AGAIN);
	VAL(NO_RECOVERY);
	VAL(NO_DATA);
	VAL(SPF_VERSION);
	VAL(SPF_LIB_VERSION_MAJOR);
	VAL(SPF_LIB_VERSION_MINOR);
	VAL(SPF_LIB_VERSION_PATCH);
	VAL(SPF_C_ERR_MSG_SIZE);
	VAL(SPF_SMTP_COMMENT_SIZE);
	VAL(SPF_RECEIVED_SPF_SIZE);
	VAL(SPF_SYSLOG_SIZE);
	VAL(SPF_DEFAULT_MAX_DNS_MECH);
	VAL(SPF_DEFAULT_MAX_DNS_PTR);
	VAL(SPF_DEFAULT_MAX_DNS_MX);
	VAL(SPF_MAX_DNS_MECH);
	VAL(SPF_MAX_DNS_PTR);
	VAL(SPF_MAX_DNS_MX);
	STR(SPF_VER_STR);
	STR(SPF_DEFAULT_EXP);
	STR(SPF_DEFAULT_WHITELIST);
	STR(SPF_EXP_MOD_NAME);
	return 0;
}
