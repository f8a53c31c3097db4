/* Fallback for clang's builtin <stddef.h>, used only where no compiler's builtin include
   directory is found. Defines everything on every __need_* request, as glibc expects. */
#ifndef __HEXPLORE_STDDEF_H
#define __HEXPLORE_STDDEF_H
typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
#ifndef __cplusplus
typedef __WCHAR_TYPE__ wchar_t;
#endif
typedef struct { long long __ll; long double __ld; } max_align_t;
#define NULL ((void *)0)
#define offsetof(t, m) __builtin_offsetof(t, m)
#endif
