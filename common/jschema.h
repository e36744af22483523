/*
 * A practical subset of JSON Schema, for checking an agent's final answer
 * against the schema a queue job gives (docs/queue.md): type (a name or a
 * list of names), properties, required, items, enum, const and
 * additionalProperties (false, or a schema). Other keywords are ignored,
 * so a richer schema still checks what this subset knows. Everything
 * validated here came from a model: hostile input, never trusted.
 */
#ifndef WARREN_JSCHEMA_H
#define WARREN_JSCHEMA_H

#include <stddef.h>

#include <jansson.h>

#define JSCHEMA_MAX_DEPTH	64	/* a schema nested deeper is not usable */

/* jschema.c */
/*
 * Whether schema is one a run can use (warren run --schema, queue add,
 * queue work all ask this): a JSON object whose keywords of this subset
 * hold what they must (type a known name or a list of them, properties an
 * object of schemas, required a list of names, items and
 * additionalProperties a schema, enum a list), in every schema nested
 * under them, at most JSCHEMA_MAX_DEPTH deep. 0, or -1 with why
 * ("$.properties.n.type: ...", the path of the keyword at fault).
 */
int	jschema_usable(const json_t *schema, char *why, size_t whysz);
/* The same of JSON text: also -1 when it is not JSON. */
int	jschema_usable_text(const char *text, char *why, size_t whysz);
/*
 * The answer text (JSON, optionally inside one ``` fence) against the
 * schema text: 0 valid, with *output the answer as compact JSON (the
 * caller frees); 1 invalid (out lists why: not JSON, or the errors); -1
 * the schema is not JSON or not usable (out says why).
 */
int	jschema_check_text(const char *schema, const char *answer,
	    char **output, char *out, size_t outsz);
/*
 * An agent's check of complete()'s result (agent_config.check_result):
 * arg points to the schema text (a const char *). 0 the result matches;
 * -1 it does not, or the schema is not usable, and why lists the errors.
 * The one check of a root's result: the orchestrator's agent, a worker
 * root's agent and the supervisor's check of a worker's done use it.
 */
int	jschema_agent_check(void *arg, const char *result, char *why,
	    size_t whysz);

#endif
