/*
 * Internal to ipc/: the checked encoder state shared by codec.c (the IPC
 * messages) and wire.c (the neutral conversation model on the wire).
 */
#ifndef WARREN_IPC_CODEC_H
#define WARREN_IPC_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/msg.h"
#include "ipc/mp.h"

/* An encoder: the first error sticks, like the reader's. */
struct enc {
	struct buf	*b;
	int		 failed;
	char		*err;
	size_t		 errsz;
	size_t		 limit;		/* buf_left(b) past which the body is
					   over IPC_FRAME_MAX: stop early */
};

/* codec.c */
int	 enc_fail(struct enc *e, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
void	 enc_map(struct enc *e, uint32_t n);
/* An array header of n entries; more than max fails, naming what. */
void	 enc_array(struct enc *e, size_t n, uint32_t max, const char *what);
void	 enc_key(struct enc *e, const char *key);
/* A string of at most max bytes, NUL-free by construction. */
void	 enc_str(struct enc *e, const char *s, size_t max, const char *what);
void	 enc_tok(struct enc *e, const char *s, size_t max, const char *what);
void	 enc_u64(struct enc *e, uint64_t v);
void	 enc_bool(struct enc *e, int v);

/* wire.c: struct msg, msg_tool, msg_usage, msg_reply as msgpack maps. */
void	 wire_put_msgs(struct enc *e, const struct msg_list *l,
	    const char *what);
/* An array of tool definitions (start.mcp_tools, llm.tools). */
void	 wire_put_tools(struct enc *e, const struct msg_tool *t, size_t n,
	    const char *what);
void	 wire_put_usage(struct enc *e, const struct msg_usage *u);
void	 wire_put_reply(struct enc *e, const struct msg_reply *r);
int	 wire_get_msgs(struct mp_reader *r, struct msg_list *l,
	    const char *what);
/* At most IPC_TOOLS_MAX into *t, malloc'd, *nt of them. */
int	 wire_get_tools(struct mp_reader *r, struct msg_tool **t, size_t *nt,
	    const char *what);
int	 wire_get_usage(struct mp_reader *r, struct msg_usage *u,
	    const char *what);
int	 wire_get_reply(struct mp_reader *r, struct msg_reply *rep,
	    const char *what);
/* A token (ipc_token_valid) copied to a malloc'd string. */
int	 wire_get_tok(struct mp_reader *r, char **s, size_t max,
	    const char *what);
/* At most IPC_TOOLS_MAX strings of at most max bytes into *v, malloc'd,
 * *nv of them, each read by get: mp_get_strdup, or wire_get_tok for
 * names. */
int	 wire_get_strs(struct mp_reader *r, char ***v, size_t *nv, size_t max,
	    int (*get)(struct mp_reader *, char **, size_t, const char *),
	    const char *what);

/*
 * One map of the protocol: its keys (an unknown or repeated one fails in
 * mp_get_key), the keys it must have (need, a bit a key), a function that
 * reads the value of key number key into arg with a typed, bounded getter
 * (a failure is the reader's: r->failed), and an optional check of the
 * whole (seen: the keys met) before the missing keys are named.
 */
struct wire_map {
	const char *const	*keys;
	int			 nkeys;
	uint32_t		 need;
	void			(*member)(struct mp_reader *r, int key,
				    void *arg, const char *what);
	int			(*check)(struct mp_reader *r, uint32_t seen,
				    void *arg);
};
#define WIRE_KEYS(k)	((int)(sizeof(k) / sizeof((k)[0])))
/* The n members of a map whose header was read (a message's body). */
int	 wire_members(struct mp_reader *r, uint32_t n,
	    const struct wire_map *m, void *arg, const char *what);
/* A whole map: its header (at most m->nkeys members), members and end. */
int	 wire_get_map(struct mp_reader *r, const struct wire_map *m,
	    void *arg, const char *what);

#endif
