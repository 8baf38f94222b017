# spfkit: `make demo`, `make test`, `make bench`. Meson does the building;
# this file installs missing Debian 12 packages (as root) and runs it.

BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
# the tests whose code runs on several threads at once
TSAN_TESTS = eval cache zone
# daemon tests with threads (spfkit-policyd --workers), and what they run
TSAN_DAEMON_TESTS = policyd-workers policyd-log
TSAN_DAEMON_TARGETS = policyd/spfkit-policyd cli/spfkit tests/policyd/test_policyd_log
BENCH_BUILD ?= build-release
MESON_TEST_FLAGS ?= --print-errorlogs

BUILD_DEPS = meson ninja-build pkg-config gcc python3 python3-dev \
	libc-ares-dev libevent-dev libidn2-dev libyaml-dev libcmocka-dev
# make test also compares compat/libspf2 with the real libspf2 (its
# headers and library), reads the RFC 7208 suite for lint in Python, and
# draws `spfkit tree --dot` output with graphviz (tests/tree: no skip), and
# asks Debian's pyspf for a second opinion on the benchmark corpus; the
# spfkit Python module's tests run under pytest, its example on aiosmtpd.
# Prometheus (promtool, and the server the metrics e2e test runs) checks
# the daemons' /metrics (issue 29). Headless Chromium renders `spfkit tree
# --html` (issue 31).
TEST_DEPS = libspf2-dev python3-yaml graphviz python3-spf python3-pytest python3-aiosmtpd \
	prometheus chromium
BENCH_DEPS = libspf2-dev valgrind postfix-policyd-spf-python python3-spf python3-dev

SANITIZE_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

.PHONY: all deps test-deps build demo test bench fuzz deb clean

all: build

deps:
	@sh tools/install-deps.sh $(BUILD_DEPS)

$(BUILD)/build.ninja:
	meson setup $(BUILD) --werror

$(ASAN_BUILD)/build.ninja:
	meson setup $(ASAN_BUILD) --werror -Db_sanitize=address,undefined -Db_lundef=false \
		-Dc_args=-fno-sanitize-recover=undefined

$(TSAN_BUILD)/build.ninja:
	meson setup $(TSAN_BUILD) --werror -Db_sanitize=thread -Db_lundef=false

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

demo: build
	@sh tools/demo.sh $(BUILD)

# Both builds use -Wall -Wextra -Werror. The sanitizer build
# (AddressSanitizer + UndefinedBehaviorSanitizer) runs the whole suite; the
# plain build, the same code without instrumentation, runs its fast
# suites and the tests only it can run (an uninstrumented Exim or OpenDMARC
# loading our libspf2.so.2, the out-of-tree install): the slow end-to-end
# and corpus tests a second time on the same code took a third of the
# suite's time (issue: keep make test under 15 minutes). Then the
# multi-threaded tests under ThreadSanitizer; one summary line at the end. Each run's old
# testlog.json goes first, and the summary reads no log older than the
# stamp, so a meson that dies before writing its log is a failure, never
# the last run's results.
TEST_STAMP = $(BUILD)/meson-logs/make-test.stamp
PLAIN_SUITES = unit dnsd cli build tools docs fuzz rfc7208 tree bench uninstrumented
test-deps: deps
	@sh tools/install-deps.sh $(TEST_DEPS)

test: test-deps $(BUILD)/build.ninja $(ASAN_BUILD)/build.ninja $(TSAN_BUILD)/build.ninja
	ninja -C $(BUILD)
	ninja -C $(ASAN_BUILD)
	ninja -C $(TSAN_BUILD) $(TSAN_TESTS:%=tests/unit/test_%) $(TSAN_DAEMON_TARGETS)
	mkdir -p $(BUILD)/meson-logs && touch $(TEST_STAMP)
	rm -f $(BUILD)/meson-logs/testlog.json
	-meson test -C $(BUILD) $(MESON_TEST_FLAGS) $(PLAIN_SUITES:%=--suite %)
	rm -f $(ASAN_BUILD)/meson-logs/testlog.json
	-$(SANITIZE_ENV) meson test -C $(ASAN_BUILD) $(MESON_TEST_FLAGS)
	rm -f $(TSAN_BUILD)/meson-logs/testlog.json
	-TSAN_OPTIONS=halt_on_error=1 meson test -C $(TSAN_BUILD) --no-rebuild \
		$(MESON_TEST_FLAGS) $(TSAN_TESTS) $(TSAN_DAEMON_TESTS)
	@python3 tools/test-summary.py --since $(TEST_STAMP) $(BUILD)/meson-logs/testlog.json \
		$(ASAN_BUILD)/meson-logs/testlog.json $(TSAN_BUILD)/meson-logs/testlog.json

bench: deps
	@sh tools/install-deps.sh $(BENCH_DEPS)
	[ -f $(BENCH_BUILD)/build.ninja ] || meson setup $(BENCH_BUILD) --buildtype=release
	ninja -C $(BENCH_BUILD)
	@sh bench/run.sh $(BENCH_BUILD)
	@echo; echo "== the spfkit Python module against pyspf"
	@/usr/bin/python3 bench/bench_python.py $(BENCH_BUILD)

# The Debian packages (debian/; README, "Installing"): the source tree,
# without build folders, copied to $(DEB_BUILD)/spfkit and built there with
# dpkg-buildpackage, so the .deb files land in $(DEB_BUILD); then lintian,
# which fails on any error.
DEB_BUILD ?= build-deb
DEB_DEPS = debhelper dpkg-dev fakeroot lintian dh-python
deb: deps
	@sh tools/install-deps.sh $(DEB_DEPS)
	rm -rf $(DEB_BUILD) && mkdir -p $(DEB_BUILD)/spfkit
	tar -cf - --exclude-vcs --exclude='./build*' --exclude='./fuzz/out' \
		--exclude='./bench/out' --exclude='./obj-*' --exclude='./debian/.debhelper' \
		--exclude='./debian/tmp' . | tar -xf - -C $(DEB_BUILD)/spfkit
	cd $(DEB_BUILD)/spfkit && dpkg-buildpackage -us -uc -b
	lintian --fail-on error $(DEB_BUILD)/*.changes
	@ls -1 $(DEB_BUILD)/*.deb

# Real fuzzing with libFuzzer (clang): FUZZ_SECONDS per target (default 60);
# `make test` only replays the seed corpora.
fuzz: deps
	@sh tools/install-deps.sh clang
	@sh tools/fuzz.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(BENCH_BUILD) $(DEB_BUILD) fuzz/out
