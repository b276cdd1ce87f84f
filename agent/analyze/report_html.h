/*
 * report_html: the --analyze report as one self-contained HTML file
 * (docs/analyze.md, "The HTML report").
 */
#ifndef ESXWATCH_REPORT_HTML_H
#define ESXWATCH_REPORT_HTML_H

#include <stddef.h>
#include <stdio.h>

/* The report of CONTRACT §5 (the JSON text --analyze --format json writes) as one
 * self-contained HTML file: 0, or -1 (errno set) when json is not such a report
 * or writing failed. */
int report_html_write(FILE *out, const char *json, size_t len);

#endif
