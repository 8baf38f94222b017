/*
 * spfkit: Sender Policy Framework (RFC 7208) in C.
 *
 * This umbrella header gives the version, the API error codes and the
 * allocator hook, and includes every other public header.
 *
 * Recipes
 *
 *   Blocking, one evaluation (CLI, scripts): build a context, a resolver
 *   (spfkit_zone_resolver() for a zone file), then call spfkit_check().
 *
 *   Sans-I/O, any event loop: spfkit_eval_new(), then loop
 *   spfkit_eval_step() for DNS questions, answer each with
 *   spfkit_eval_answer(), until the step says SPFKIT_STEP_DONE; read
 *   spfkit_eval_result(); spfkit_eval_free().
 *
 *   A publisher's checks (spfkit lint and tree as data): spfkit_lint_run()
 *   over any resolver, then read the summary, findings and tree
 *   (publish.h); spfkit_lint_free().
 *
 * Threads: a context is read-only after setup and may be shared by any
 * number of threads; one evaluation is used by one thread at a time.
 *
 * Errors: API failures are negative `enum spfkit_err` values (never
 * renumbered); the SPF outcome (pass, fail, ...) is data in
 * `struct spfkit_result`, never an API error.
 */
#ifndef SPFKIT_SPFKIT_H
#define SPFKIT_SPFKIT_H

#include <spfkit/common.h>
#include <spfkit/reason.h>
#include <spfkit/resolver.h>
#include <spfkit/dnswire.h>
#include <spfkit/record.h>
#include <spfkit/eval.h>
#include <spfkit/output.h>
#include <spfkit/zone.h>
#include <spfkit/cares.h>
#include <spfkit/cache.h>
#include <spfkit/publish.h>

#endif
