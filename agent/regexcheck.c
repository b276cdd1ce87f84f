/*
 * regexcheck: refuse POSIX regexes whose compiled form would explode
 * (see regexcheck.h).  One check for --check-config and the rules engine.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>

#include "regexcheck.h"

/*
 * glibc's regcomp also copies the operand of every "+" (and of a bound), so
 * stacked or nested repetitions ("a?+++++", "((a+)+)+...") grow the
 * compiled tree exponentially: a few dozen characters can take gigabytes.
 * A repetition of a repetition is never needed: refuse it.  Estimate the
 * size of the rest the way it expands and refuse what would be large.
 */
#define REGEX_COST_MAX	2000.0
#define REGEX_MAX_NEST	63

static size_t
regex_bracket_end(const char *re, size_t i)
{
	size_t j = i + 1;

	if (re[j] == '^')
		j++;
	if (re[j] == ']')
		j++;
	while (re[j] != '\0' && re[j] != ']') {
		if (re[j] == '[' && (re[j + 1] == ':' || re[j + 1] == '.' ||
		    re[j + 1] == '=')) {
			char delim = re[j + 1];
			size_t k = j + 2;

			while (re[k] != '\0' && !(re[k] == delim && re[k + 1] == ']'))
				k++;
			if (re[k] == '\0')
				return k;
			j = k + 2;
			continue;
		}
		j++;
	}
	return re[j] != '\0' ? j + 1 : j;
}

const char *
regex_cost_refused(const char *re, size_t *at)
{
	double seq[REGEX_MAX_NEST + 1], last[REGEX_MAX_NEST + 1];
	int d = 0;
	size_t i = 0;
	bool quant = false;

	seq[0] = last[0] = 0;
	while (re[i] != '\0') {
		char ch = re[i];
		bool q = ch == '*' || ch == '+' || ch == '?' || ch == '{';

		*at = i;
		if (q && quant)
			return "a repetition of a repetition (as in 'a+*' or "
			    "'x?+') is refused: it makes the compiled regex "
			    "explode; write it once";
		quant = false;
		if (ch == '\\' && re[i + 1] != '\0') {
			last[d] = 1;
			seq[d] += 1;
			i += 2;
			continue;
		}
		if (ch == '[') {
			last[d] = 1;
			seq[d] += 1;
			i = regex_bracket_end(re, i);
			continue;
		}
		if (ch == '(') {
			if (d >= REGEX_MAX_NEST)
				return "groups are nested more than 63 deep";
			d++;
			seq[d] = last[d] = 0;
		} else if (ch == ')' && d > 0) {
			double g = seq[d] + 1;

			d--;
			last[d] = g;
			seq[d] += g;
		} else if (ch == '+' || ch == '*' || ch == '?') {
			if (ch == '+') {
				seq[d] += last[d];
				last[d] *= 2;
			}
			quant = true;
		} else if (ch == '{' && isdigit((unsigned char)re[i + 1])) {
			double k = 0, m = 0;

			for (i++; isdigit((unsigned char)re[i]) && k < 1e6; i++)
				k = k * 10 + (re[i] - '0');
			if (re[i] == ',')
				for (i++; isdigit((unsigned char)re[i]) && m < 1e6; i++)
					m = m * 10 + (re[i] - '0');
			if (m > k)
				k = m;
			if (k < 1)
				k = 1;
			seq[d] += last[d] * (k - 1);
			last[d] *= k;
			if (re[i] == '\0')
				break;
			quant = true;	/* re[i] is the closing brace */
		} else if (ch != '|') {
			last[d] = 1;
			seq[d] += 1;
		}
		if (seq[d] > REGEX_COST_MAX || last[d] > REGEX_COST_MAX)
			return "the regex expands to too large an automaton "
			    "(nested or stacked repetitions); simplify it";
		i++;
	}
	return NULL;
}
