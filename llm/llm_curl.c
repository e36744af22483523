/*
 * Loading libcurl on first use (see llm_curl.h for why).
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "llm/llm_curl.h"

struct llm_curl	lcurl;

#define SYM(name, field) { name, offsetof(struct llm_curl, field) }

static const struct {
	const char	*name;
	size_t		 off;
} llm_curl_syms[] = {
	SYM("curl_global_init", global_init),
	SYM("curl_easy_init", easy_init),
	SYM("curl_easy_setopt", easy_setopt),
	SYM("curl_easy_getinfo", easy_getinfo),
	SYM("curl_easy_cleanup", easy_cleanup),
	SYM("curl_easy_strerror", easy_strerror),
	SYM("curl_slist_append", slist_append),
	SYM("curl_slist_free_all", slist_free_all),
	SYM("curl_multi_init", multi_init),
	SYM("curl_multi_setopt", multi_setopt),
	SYM("curl_multi_add_handle", multi_add_handle),
	SYM("curl_multi_remove_handle", multi_remove_handle),
	SYM("curl_multi_socket_action", multi_socket_action),
	SYM("curl_multi_assign", multi_assign),
	SYM("curl_multi_info_read", multi_info_read),
	SYM("curl_multi_cleanup", multi_cleanup),
	SYM("curl_getdate", getdate),
};

int
llm_curl_load(char *err, size_t errsz)
{
	static int	 loaded;
	struct llm_curl	 t;
	void		*lib, *sym;
	size_t		 i;

	if (loaded)
		return 0;
	/* The soname Debian's libcurl4 (OpenSSL flavour) and libcurl3-gnutls share. */
	if ((lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL)) == NULL &&
	    (lib = dlopen("libcurl-gnutls.so.4", RTLD_NOW | RTLD_LOCAL)) == NULL) {
		snprintf(err, errsz, "cannot load libcurl (%s): install the "
		    "Debian package libcurl4", dlerror());
		return -1;
	}
	memset(&t, 0, sizeof(t));
	for (i = 0; i < sizeof(llm_curl_syms) / sizeof(llm_curl_syms[0]); i++) {
		if ((sym = dlsym(lib, llm_curl_syms[i].name)) == NULL) {
			snprintf(err, errsz, "libcurl lacks %s: it is too old "
			    "(warren needs libcurl 7.74 or later)",
			    llm_curl_syms[i].name);
			dlclose(lib);
			return -1;
		}
		/* POSIX guarantees a dlsym result converts to a function pointer. */
		memcpy((char *)&t + llm_curl_syms[i].off, &sym, sizeof(sym));
	}
	if (t.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(err, errsz, "libcurl initialisation failed");
		dlclose(lib);
		return -1;
	}
	lcurl = t;
	loaded = 1;	/* lib stays open for the life of the process */
	return 0;
}
