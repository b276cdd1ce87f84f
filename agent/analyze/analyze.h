/*
 * analyze: --analyze BUNDLE, a vm-support bundle explained offline
 * (docs/analyze.md; CONTRACT §5).
 *
 * The bundle (bundle.h) is read once: its logs go line by line through
 * the logwatch engine (the catalogue, the configuration's rules and
 * parsers, storm folding by the lines' own time), its saved command
 * outputs answer the built-in collectors through the bundle host
 * (host/bundle.h); every event names the bundle's host, esxwatch_input
 * "bundle".  Then the events, in time order, go through the diagnosis
 * stage, and the report is written: text, JSON (§5) or HTML.
 */
#ifndef ESXWATCH_ANALYZE_H
#define ESXWATCH_ANALYZE_H

struct config;

/* The whole command: the exit code (0 no finding of severity error or
 * critical, 1 at least one, 2 not a readable bundle / bad arguments). */
int	analyze_main(const struct config *cfg, const char *bundle,
	    const char *format, const char *out);

#endif
