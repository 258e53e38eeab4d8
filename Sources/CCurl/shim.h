#ifndef REACHD_CCURL_SHIM_H
#define REACHD_CCURL_SHIM_H

// libcurl (Debian 12: 7.88.1) for the probe engine: the multi interface on one thread.
#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are C variadics, which Swift cannot call. Each wrapper
// below fixes one argument type, so the compiler checks what the option expects; the option
// itself stays a parameter. Passing the wrong kind of option to one of them is still a bug that
// curl reports as CURLE_BAD_FUNCTION_ARGUMENT or worse, as in C.

/// curl_easy_setopt for options that take a `long` (timeouts, flags, CONNECT_ONLY, …).
static inline CURLcode reachd_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt for options that take a C string (URL, PROTOCOLS_STR, PROXY, USERAGENT).
/// curl copies strings (since 7.17.0), so the caller's buffer may go away after the call.
static inline CURLcode reachd_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt for options that take an opaque pointer (PRIVATE, WRITEDATA, ERRORBUFFER).
/// curl does not copy what it points to: the caller keeps it alive for the transfer.
static inline CURLcode reachd_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt for options that take a string list (CONNECT_TO). The list is not copied:
/// it must outlive the transfer, and is freed by the caller with curl_slist_free_all.
static inline CURLcode reachd_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *list) {
    return curl_easy_setopt(handle, option, list);
}

/// curl_easy_setopt(CURLOPT_WRITEFUNCTION): the function pointer has its own type so that Swift
/// can pass a `@convention(c)` closure.
static inline CURLcode reachd_curl_easy_setopt_write_function(CURL *handle, curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

/// curl_easy_getinfo for `long` answers (RESPONSE_CODE).
static inline CURLcode reachd_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

/// curl_easy_getinfo for `curl_off_t` answers: the *_TIME_T timings, in microseconds.
static inline CURLcode reachd_curl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

/// CURLMsg keeps its result in a union; Swift imports unions, but reading the member through a
/// function keeps the engine independent of how the importer names it.
static inline CURLcode reachd_curl_msg_result(const CURLMsg *message) {
    return message->data.result;
}

#endif
