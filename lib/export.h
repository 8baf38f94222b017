/*
 * Compiled ahead of every libspfkit and libspfkit-event source (meson
 * passes -include lib/export.h). The libraries are built with
 * -fvisibility=hidden: what a public header declares is made visible
 * here, all else (the spfkit__* internals) stays hidden. Which visible
 * symbols the shared libraries then export is decided by their version
 * scripts, lib/spfkit.map and lib/event/spfkit-event.map;
 * tests/build/check_symbols.py checks the three agree.
 *
 * A new public header goes in <spfkit/spfkit.h>, or here if it has no
 * place in the umbrella (as <spfkit/event.h>, libspfkit-event's).
 */
#ifndef SPFKIT_LIB_EXPORT_H
#define SPFKIT_LIB_EXPORT_H

#pragma GCC visibility push(default)
#include <spfkit/spfkit.h>
#include <spfkit/event.h>
#pragma GCC visibility pop

#endif
