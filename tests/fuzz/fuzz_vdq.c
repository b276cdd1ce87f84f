/* libFuzzer target: the tolerant vdq -q / -qH parser must never crash, leak
 * or read out of bounds, whatever the bytes, and every disk it keeps must
 * have a non-empty, NUL-terminated name. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../collectors/host/vdq.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vdq_result r;
	char	 err[128];
	size_t	 i;

	if (vdq_parse((const char *)data, size, &r, err, sizeof(err)) == 0) {
		for (i = 0; i < r.n; i++) {
			if (r.disks[i].name[0] == '\0' ||
			    strlen(r.disks[i].name) >= VDQ_VAL_MAX)
				abort();
			(void)vdq_state_name(vdq_state_of(r.disks[i].state));
		}
		vdq_result_free(&r);
	} else if (memchr(err, '\0', sizeof(err)) == NULL)
		abort();
	return 0;
}
