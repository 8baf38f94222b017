/* The metrics listener (see metrics_http.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "listen.h"
#include "metrics_http.h"

/* A scraper that stops talking is dropped after this long. */
#define METRICS_HTTP_TIMEOUT_S 10
#define METRICS_HTTP_MAX_HEADERS 8192

struct spfkit__metrics_http {
	struct spfkit__metrics *m;
	int fd;
	int wake[2]; /* stop(): a byte on wake[1] ends the thread's loop */
	struct event_base *base;
	struct evhttp *http;
	struct event *stop_ev;
	pthread_t thread;
};

static int copy_part(const char *s, size_t len, char *out, size_t size)
{
	if (len == 0 || len >= size)
		return -1;
	memcpy(out, s, len);
	out[len] = '\0';
	return 0;
}

int spfkit__metrics_http_addr(const char *spec, char *host, size_t host_size, char *port,
			      size_t port_size, char *why, size_t why_size)
{
	size_t len = strlen(spec);
	const char *colon = strrchr(spec, ':');
	const char *p;

	if (colon == NULL) {
		colon = spec - 1; /* PORT alone */
		snprintf(host, host_size, "%s", SPFKIT__METRICS_DEFAULT_HOST);
	} else if (spec[0] == '[') {
		if (colon == spec || colon[-1] != ']' ||
		    copy_part(spec + 1, (size_t)(colon - spec) - 2, host, host_size) != 0) {
			snprintf(why, why_size, "'%.100s' is not [IPV6]:PORT", spec);
			return -1;
		}
	} else if (memchr(spec, ':', (size_t)(colon - spec)) != NULL) {
		snprintf(why, why_size, "'%.100s': write an IPv6 address in brackets, [::1]:PORT",
			 spec);
		return -1;
	} else if (copy_part(spec, (size_t)(colon - spec), host, host_size) != 0) {
		snprintf(why, why_size, "'%.100s' has no host before the ':'", spec);
		return -1;
	}
	for (p = colon + 1; *p != '\0'; p++)
		if (*p < '0' || *p > '9')
			break;
	if (*p != '\0' || copy_part(colon + 1, len - (size_t)(colon + 1 - spec), port, port_size) != 0 ||
	    strtoul(port, NULL, 10) > 65535) {
		snprintf(why, why_size, "'%.100s' has no port number (0-65535) after the host", spec);
		return -1;
	}
	return 0;
}

int spfkit__metrics_http_listen(const char *prog, const char *spec, unsigned *bound_port)
{
	char host[256], port[8], why[200];

	if (spfkit__metrics_http_addr(spec, host, sizeof(host), port, sizeof(port), why,
				      sizeof(why)) != 0) {
		fprintf(stderr, "%s: metrics listener: %s\n", prog, why);
		return -1;
	}
	return spfkit__mta_listen_tcp(prog, host, port, AF_UNSPEC, bound_port);
}

/* ---- serving ------------------------------------------------------------- */

static void reply_text(struct evhttp_request *req, int code, const char *reason, const char *text)
{
	struct evbuffer *body = evbuffer_new();

	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "text/plain; charset=utf-8");
	if (body != NULL)
		evbuffer_add(body, text, strlen(text));
	evhttp_send_reply(req, code, reason, body);
	if (body != NULL)
		evbuffer_free(body);
}

static void serve_metrics(struct spfkit__metrics_http *h, struct evhttp_request *req)
{
	struct spfkit__buf text;
	struct evbuffer *body = evbuffer_new();

	spfkit__buf_init(&text, NULL, SPFKIT__METRICS_MAX_BODY);
	if (body == NULL || spfkit__metrics_render(h->m, &text) != 0 ||
	    evbuffer_add(body, text.data, text.len) != 0) {
		if (body != NULL)
			evbuffer_free(body);
		spfkit__buf_free(&text);
		reply_text(req, HTTP_INTERNAL, "Internal Server Error", "out of memory\n");
		return;
	}
	spfkit__buf_free(&text);
	/* the version of the text format: Prometheus's exposition_formats.md */
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "text/plain; version=0.0.4; charset=utf-8");
	evhttp_send_reply(req, HTTP_OK, "OK", body);
	evbuffer_free(body);
}

static void on_request(struct evhttp_request *req, void *arg)
{
	struct spfkit__metrics_http *h = arg;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);

	if (path == NULL || strcmp(path, "/metrics") != 0) {
		reply_text(req, HTTP_NOTFOUND, "Not Found", "metrics are at /metrics\n");
		return;
	}
	if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
		evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "GET, HEAD");
		reply_text(req, 405, "Method Not Allowed", "GET or HEAD\n");
		return;
	}
	serve_metrics(h, req);
}

static void on_stop(evutil_socket_t fd, short what, void *arg)
{
	struct spfkit__metrics_http *h = arg;

	(void)fd;
	(void)what;
	event_base_loopbreak(h->base);
}

static void *run(void *arg)
{
	struct spfkit__metrics_http *h = arg;

	event_base_dispatch(h->base);
	return NULL;
}

static void release(struct spfkit__metrics_http *h)
{
	if (h->http != NULL)
		evhttp_free(h->http); /* closes the bound socket */
	else if (h->fd >= 0)
		close(h->fd);
	if (h->stop_ev != NULL)
		event_free(h->stop_ev);
	if (h->base != NULL)
		event_base_free(h->base);
	if (h->wake[0] >= 0)
		close(h->wake[0]);
	if (h->wake[1] >= 0)
		close(h->wake[1]);
	spfkit__free(NULL, h);
}

int spfkit__metrics_http_start(struct spfkit__metrics *m, int fd,
			       struct spfkit__metrics_http **out)
{
	struct spfkit__metrics_http *h = spfkit__zalloc(NULL, sizeof(*h));

	if (h == NULL) {
		close(fd);
		return -1;
	}
	h->m = m;
	h->fd = fd;
	h->wake[0] = h->wake[1] = -1;
	if (pipe(h->wake) != 0)
		h->wake[0] = h->wake[1] = -1;
	h->base = h->wake[0] >= 0 ? event_base_new() : NULL;
	h->http = h->base != NULL ? evhttp_new(h->base) : NULL;
	/* evconnlistener accepts until EAGAIN: a blocking socket would stall the thread */
	if (h->http == NULL || evutil_make_socket_nonblocking(fd) != 0 ||
	    evhttp_accept_socket(h->http, fd) != 0) {
		release(h);
		return -1;
	}
	evhttp_set_timeout(h->http, METRICS_HTTP_TIMEOUT_S);
	evhttp_set_max_headers_size(h->http, METRICS_HTTP_MAX_HEADERS);
	evhttp_set_max_body_size(h->http, 0);
	evhttp_set_allowed_methods(h->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST);
	evhttp_set_gencb(h->http, on_request, h);
	h->stop_ev = event_new(h->base, h->wake[0], EV_READ, on_stop, h);
	if (h->stop_ev == NULL || event_add(h->stop_ev, NULL) != 0 ||
	    pthread_create(&h->thread, NULL, run, h) != 0) {
		release(h);
		return -1;
	}
	*out = h;
	return 0;
}

void spfkit__metrics_http_stop(struct spfkit__metrics_http *h)
{
	char byte = 0;
	ssize_t n;

	if (h == NULL)
		return;
	do
		n = write(h->wake[1], &byte, 1);
	while (n < 0 && errno == EINTR);
	pthread_join(h->thread, NULL);
	release(h);
}
