/*
 * libcurl, loaded when the first LLM engine is made rather than at start.
 *
 * Linking libcurl maps about 30 libraries (TLS, Kerberos, LDAP, SSH, ...)
 * into every `warren` process, which tripled the start-up time of commands
 * that never talk to a model (`warren sandbox exec`, `runs`, `show`,
 * `profiles`) and the size of the spawn server forked from it. So the LLM
 * engine calls libcurl through this table, filled by dlopen("libcurl.so.4")
 * the first time it is needed. The types and constants still come from
 * <curl/curl.h>.
 */
#ifndef WARREN_LLM_CURL_H
#define WARREN_LLM_CURL_H

#include <stddef.h>
#include <time.h>

#include <curl/curl.h>

struct llm_curl {
	CURLcode	  (*global_init)(long);
	CURL		 *(*easy_init)(void);
	CURLcode	  (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode	  (*easy_getinfo)(CURL *, CURLINFO, ...);
	void		  (*easy_cleanup)(CURL *);
	const char	 *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void		  (*slist_free_all)(struct curl_slist *);
	CURLM		 *(*multi_init)(void);
	CURLMcode	  (*multi_setopt)(CURLM *, CURLMoption, ...);
	CURLMcode	  (*multi_add_handle)(CURLM *, CURL *);
	CURLMcode	  (*multi_remove_handle)(CURLM *, CURL *);
	CURLMcode	  (*multi_socket_action)(CURLM *, curl_socket_t, int,
			    int *);
	CURLMcode	  (*multi_assign)(CURLM *, curl_socket_t, void *);
	CURLMsg		 *(*multi_info_read)(CURLM *, int *);
	CURLMcode	  (*multi_cleanup)(CURLM *);
	time_t		  (*getdate)(const char *, const time_t *);
};

/* Filled by llm_curl_load(); valid only after it returned 0. */
extern struct llm_curl lcurl;

/* llm_curl.c */
/* Load libcurl and initialise it once; -1 with a message naming the fix. */
int	llm_curl_load(char *err, size_t errsz);

#endif
