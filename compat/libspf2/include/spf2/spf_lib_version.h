/* The libspf2 release whose ABI compat/libspf2 provides. */
#ifndef INC_SPF_VERSION
#define INC_SPF_VERSION

#define SPF_LIB_VERSION_MAJOR 1
#define SPF_LIB_VERSION_MINOR 2
#define SPF_LIB_VERSION_PATCH 10

#endif
