/* vsphere_tls: the vSphere client's TLS over output/ (vsphere_tls.c). */
#ifndef ESXWATCH_VSPHERE_TLS_H
#define ESXWATCH_VSPHERE_TLS_H

#include <stddef.h>

struct vs_endpoint;
struct vs_tls;

int	vsphere_tls_make(const struct vs_endpoint *, struct vs_tls *out,
	    char *err, size_t errlen);

#endif
