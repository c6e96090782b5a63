/* codeport: setjmp and longjmp for wasm32-wasi without WebAssembly
 * exception handling. Code that includes this header is compiled with
 * -mllvm -enable-emscripten-sjlj: LLVM rewrites each setjmp into a call of
 * __wasm_setjmp and each longjmp into emscripten_longjmp, and the host
 * unwinds to the invoke_ of the function that called setjmp (see
 * exceptions.cpp). */
#ifndef CODEPORT_SETJMP_H
#define CODEPORT_SETJMP_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    void *__invocation; /* the setjmp caller's invocation, __wasm_setjmp_test's key */
    unsigned __label;   /* which setjmp of that function */
    unsigned __spare[2];
} jmp_buf[1];

int setjmp(jmp_buf);
_Noreturn void longjmp(jmp_buf, int);

#ifdef __cplusplus
}
#endif

#endif
