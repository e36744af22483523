/*
 * How the sandbox names its layers and reports a failure: a layer bit, a
 * missing flag, errno and a message naming the layer and the cause. Apart
 * from the rest so the build-time filter generator (sandbox_bpfgen.c) can
 * link the seccomp rules without the rest of the sandbox.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sandbox/sandbox_int.h"

const struct sandbox_layer sandbox_layers[] = {
	{ SANDBOX_SETSID, "setsid" },
	{ SANDBOX_CLOSEFDS, "closefds" },
	{ SANDBOX_PIDS, "pids" },
	{ SANDBOX_MEMORY, "memory" },
	{ SANDBOX_UIDDROP, "uid" },
	{ SANDBOX_RLIMITS, "rlimits" },
	{ SANDBOX_USERNS, "userns" },
	{ SANDBOX_MNTNS, "mntns" },
	{ SANDBOX_PIDNS, "pidns" },
	{ SANDBOX_NETNS, "netns" },
	{ SANDBOX_IPCNS, "ipcns" },
	{ SANDBOX_CAPS, "caps" },
	{ SANDBOX_NNP, "nnp" },
	{ SANDBOX_NODUMP, "nodump" },
	{ SANDBOX_LANDLOCK, "landlock" },
	{ SANDBOX_LLSCOPE, "landlock:scope" },
	{ SANDBOX_SECCOMP, "seccomp" },
};
const size_t sandbox_nlayers = sizeof(sandbox_layers) /
    sizeof(sandbox_layers[0]);

/* Fill e: "layer: what[: strerror(errnum)]". */
static void
sandbox_error_fill(struct sandbox_error *e, unsigned layer, int missing,
    int errnum, const char *fmt, va_list ap)
{
	char	 what[SANDBOX_ERR_LEN];

	if (e == NULL)
		return;
	vsnprintf(what, sizeof(what), fmt, ap);
	e->layer = layer;
	e->missing = missing;
	e->errnum = errnum;
	if (errnum != 0)
		snprintf(e->msg, sizeof(e->msg), "%s: %s: %s",
		    sandbox_layer_name(layer), what, strerror(errnum));
	else
		snprintf(e->msg, sizeof(e->msg), "%s: %s",
		    sandbox_layer_name(layer), what);
}

int
sandbox_fail(struct sandbox_error *e, unsigned layer, int errnum,
    const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	sandbox_error_fill(e, layer, 0, errnum, fmt, ap);
	va_end(ap);
	errno = errnum != 0 ? errnum : EPERM;
	return -1;
}

int
sandbox_missing(struct sandbox_error *e, unsigned layer, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	sandbox_error_fill(e, layer, 1, 0, fmt, ap);
	va_end(ap);
	errno = ENOTSUP;
	return -1;
}

/* Append "; text" to a note. */
void
sandbox_note(char *note, size_t len, const char *fmt, ...)
{
	va_list	 ap;
	size_t	 n;

	n = strlen(note);
	if (n != 0 && n + 2 < len) {
		strlcat(note, "; ", len);
		n += 2;
	}
	if (n >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(note + n, len - n, fmt, ap);
	va_end(ap);
}

/* The names of the layers in mask, ", "-separated (for messages). */
void
sandbox_mask_names(unsigned mask, char *buf, size_t len)
{
	size_t	 i;

	buf[0] = '\0';
	for (i = 0; i < sandbox_nlayers; i++) {
		if (!(mask & sandbox_layers[i].bit))
			continue;
		if (buf[0] != '\0')
			strlcat(buf, ", ", len);
		strlcat(buf, sandbox_layers[i].name, len);
	}
}

const char *
sandbox_layer_name(unsigned bit)
{
	size_t	 i;

	for (i = 0; i < sandbox_nlayers; i++)
		if (sandbox_layers[i].bit == bit)
			return sandbox_layers[i].name;
	return "sandbox";
}
