// libcurl for Swift: the system's <curl/curl.h>, and typed wrappers of its variadic calls, which Swift cannot
// call directly (curl_easy_setopt, curl_easy_getinfo, curl_multi_setopt).
#ifndef TABLESYNC_CCURL_SHIM_H
#define TABLESYNC_CCURL_SHIM_H

#include <curl/curl.h>

static inline CURLcode tablesync_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode tablesync_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode tablesync_curl_set_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode tablesync_curl_set_write_function(CURL *handle, CURLoption option,
                                                         size_t (*function)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(handle, option, function);
}

static inline CURLcode tablesync_curl_get_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode tablesync_curl_get_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLMcode tablesync_curl_multi_set_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

#endif
