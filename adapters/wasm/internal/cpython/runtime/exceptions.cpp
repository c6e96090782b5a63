// exceptions.cpp: C++ exceptions and C setjmp/longjmp for the scientific
// reactor, which has no WebAssembly exception handling (wazero runs only
// the standard proposals; see docs/scientific.md for the measurements that
// chose this route).
//
// The C++ packages (kiwisolver, contourpy, matplotlib) are compiled with
// LLVM's Emscripten lowering: -mllvm -enable-emscripten-cxx-exceptions
// turns every call that may throw, made where a destructor or a catch
// clause is in scope, into a call of an imported env.invoke_<signature>
// with the callee's table index, followed by a test of __THREW__; C code
// that uses setjmp (FreeType, qhull) is compiled with
// -mllvm -enable-emscripten-sjlj, which does the same for the calls after
// a setjmp, keyed by the jmp_buf. The host (adapters/wasm) implements each
// invoke_ by calling the function pointer through a dispatcher that
// wasmpatch adds, and codeport_cxx.throw by abandoning every WebAssembly
// frame up to the innermost invoke_, which then returns as if the callee
// had, with the stack pointer it had on entry. This file is the guest's
// half: what the lowered code calls to allocate, throw, match, catch and
// rethrow an exception (the names and contracts are the lowering's and
// the Itanium C++ ABI's), and setjmp's bookkeeping.
//
// A throw that no invoke_ catches fails the host's call into the module
// (an uncaught C++ exception); the host discards the instance. The module
// is single-threaded: the state below is plain globals.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <typeinfo>

namespace __cxxabiv1 {
// The base class of every type_info libc++abi emits. can_catch is its
// fifth virtual function (after the two destructors and two no-ops); its
// declaration here matches libc++abi's private_typeinfo.h, whose
// definitions (in libc++abi.a) the vtables point to.
class __shim_type_info : public std::type_info {
public:
  ~__shim_type_info() override;
  virtual void noop1() const;
  virtual void noop2() const;
  virtual bool can_catch(const __shim_type_info *thrown, void *&adjusted) const = 0;
};
}  // namespace __cxxabiv1
using __cxxabiv1::__shim_type_info;

namespace {

// Header sits in front of every thrown object (alignas(16): the object
// after it keeps malloc's alignment). A rethrow_exception of an
// exception_ptr throws a dependent header: one of its own, pointing at the
// primary one whose object it throws, so that each throw has its own catch
// bookkeeping and the object lives as long as any reference to it.
struct alignas(16) Header {
  const std::type_info *type;
  void *(*destructor)(void *);  // wasm32 destructors return this
  int refs;                     // exception_ptr references, and one for the throw
  int handlers;                 // catch clauses active for this throw
  bool rethrown;                // in flight again after `throw;`
  void *adjusted;               // the object as the matched catch clause sees it
  Header *nextCaught;           // the caught stack, innermost first
  Header *primary;              // a dependent header's primary, else nullptr
};

Header *headerOf(void *obj) { return static_cast<Header *>(obj) - 1; }
void *objectOf(Header *h) { return h + 1; }
// The object a header throws: its own, or its primary's.
void *thrownObject(Header *h) { return objectOf(h->primary ? h->primary : h); }

void *inFlight;     // the exception being propagated
Header *caughtTop;  // exceptions caught and not yet ended
int uncaught;       // thrown and not yet caught (std::uncaught_exceptions)
int tempRet0;       // the lowering's second return value

void release(Header *h) {
  if (--h->refs > 0) {
    return;
  }
  if (h->primary) {
    release(h->primary);
  } else if (h->destructor) {
    h->destructor(objectOf(h));
  }
  free(h);
}

}  // namespace

extern "C" {

// The lowering's flags, tested after every invoke_: __THREW__ is 1 for a
// C++ exception, or the jmp_buf of a longjmp with __threwValue its value.
int __THREW__;
int __threwValue;

// Unwinds to the innermost invoke_ (the host; never returns).
[[noreturn]] __attribute__((import_module("codeport_cxx"), import_name("throw"))) void
codeport_cxx_throw(void);

int getTempRet0(void) { return tempRet0; }
void setTempRet0(int v) { tempRet0 = v; }
void *llvm_eh_typeid_for(void *type) { return type; }

[[noreturn]] static void propagate(void *obj) {
  inFlight = obj;
  __THREW__ = 1;
  __threwValue = 0;
  codeport_cxx_throw();
}

void *__cxa_allocate_exception(size_t size) {
  Header *h = static_cast<Header *>(calloc(1, sizeof(Header) + size));
  if (!h) {
    abort();  // out of memory while throwing: the call ends with a trap
  }
  return objectOf(h);
}

void __cxa_free_exception(void *obj) { free(headerOf(obj)); }

[[noreturn]] void __cxa_throw(void *obj, std::type_info *type, void *(*destructor)(void *)) {
  Header *h = headerOf(obj);
  h->type = type;
  h->destructor = destructor;
  h->refs = 1;
  uncaught++;
  propagate(obj);
}

// Continues an exception's propagation after a cleanup landing pad.
[[noreturn]] void __resumeException(void *obj) { propagate(obj); }

// __cxa_find_matching_catch_N: the landing pad's catch clauses are its
// N-2 type_info arguments (a null one catches everything); returns the
// exception and sets tempRet0 to the clause type that matched, or to the
// thrown type when none did (the pad then resumes the unwind).
static void *findMatchingCatch(void *const *types, int n) {
  void *obj = inFlight;
  if (!obj) {
    tempRet0 = 0;
    return nullptr;
  }
  Header *h = headerOf(obj);
  void *base = thrownObject(h);
  h->adjusted = base;
  auto *thrown = static_cast<const __shim_type_info *>(h->type);
  for (int i = 0; i < n; i++) {
    auto *clause = static_cast<const __shim_type_info *>(types[i]);
    if (!clause) {  // catch (...)
      tempRet0 = 0;
      return obj;
    }
    void *adjusted = base;
    if (clause->can_catch(thrown, adjusted)) {
      h->adjusted = adjusted;
      tempRet0 = static_cast<int>(reinterpret_cast<uintptr_t>(clause));
      return obj;
    }
  }
  tempRet0 = static_cast<int>(reinterpret_cast<uintptr_t>(thrown));
  return obj;
}

// One definition per clause count clang emits (up to 20 catch clauses in
// one landing pad).
void *__cxa_find_matching_catch_2(void) { return findMatchingCatch(nullptr, 0); }
void *__cxa_find_matching_catch_3(void *t0) {
  void *const t[] = {t0};
  return findMatchingCatch(t, 1);
}
void *__cxa_find_matching_catch_4(void *t0, void *t1) {
  void *const t[] = {t0, t1};
  return findMatchingCatch(t, 2);
}
void *__cxa_find_matching_catch_5(void *t0, void *t1, void *t2) {
  void *const t[] = {t0, t1, t2};
  return findMatchingCatch(t, 3);
}
void *__cxa_find_matching_catch_6(void *t0, void *t1, void *t2, void *t3) {
  void *const t[] = {t0, t1, t2, t3};
  return findMatchingCatch(t, 4);
}
void *__cxa_find_matching_catch_7(void *t0, void *t1, void *t2, void *t3, void *t4) {
  void *const t[] = {t0, t1, t2, t3, t4};
  return findMatchingCatch(t, 5);
}
void *__cxa_find_matching_catch_8(void *t0, void *t1, void *t2, void *t3, void *t4, void *t5) {
  void *const t[] = {t0, t1, t2, t3, t4, t5};
  return findMatchingCatch(t, 6);
}
void *__cxa_find_matching_catch_9(void *t0, void *t1, void *t2, void *t3, void *t4, void *t5, void *t6) {
  void *const t[] = {t0, t1, t2, t3, t4, t5, t6};
  return findMatchingCatch(t, 7);
}
void *__cxa_find_matching_catch_10(void *t0, void *t1, void *t2, void *t3, void *t4, void *t5, void *t6, void *t7) {
  void *const t[] = {t0, t1, t2, t3, t4, t5, t6, t7};
  return findMatchingCatch(t, 8);
}
void *__cxa_find_matching_catch_11(void *t0, void *t1, void *t2, void *t3, void *t4, void *t5, void *t6, void *t7, void *t8) {
  void *const t[] = {t0, t1, t2, t3, t4, t5, t6, t7, t8};
  return findMatchingCatch(t, 9);
}
void *__cxa_find_matching_catch_12(void *t0, void *t1, void *t2, void *t3, void *t4, void *t5, void *t6, void *t7, void *t8, void *t9) {
  void *const t[] = {t0, t1, t2, t3, t4, t5, t6, t7, t8, t9};
  return findMatchingCatch(t, 10);
}
void *__cxa_find_matching_catch_13(void *t0, void *t1, void *t2, void *t3, void *t4, void *t5, void *t6, void *t7, void *t8, void *t9, void *t10) {
  void *const t[] = {t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10};
  return findMatchingCatch(t, 11);
}
void *__cxa_find_matching_catch_14(void *t0, void *t1, void *t2, void *t3, void *t4, void *t5, void *t6, void *t7, void *t8, void *t9, void *t10, void *t11) {
  void *const t[] = {t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11};
  return findMatchingCatch(t, 12);
}
void *__cxa_find_matching_catch_15(void *t0, void *t1, void *t2, void *t3, void *t4, void *t5, void *t6, void *t7, void *t8, void *t9, void *t10, void *t11, void *t12) {
  void *const t[] = {t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12};
  return findMatchingCatch(t, 13);
}
void *__cxa_find_matching_catch_16(void *t0, void *t1, void *t2, void *t3, void *t4, void *t5, void *t6, void *t7, void *t8, void *t9, void *t10, void *t11, void *t12, void *t13) {
  void *const t[] = {t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13};
  return findMatchingCatch(t, 14);
}
void *__cxa_find_matching_catch_17(void *t0, void *t1, void *t2, void *t3, void *t4, void *t5, void *t6, void *t7, void *t8, void *t9, void *t10, void *t11, void *t12, void *t13, void *t14) {
  void *const t[] = {t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, t14};
  return findMatchingCatch(t, 15);
}
void *__cxa_find_matching_catch_18(void *t0, void *t1, void *t2, void *t3, void *t4, void *t5, void *t6, void *t7, void *t8, void *t9, void *t10, void *t11, void *t12, void *t13, void *t14, void *t15) {
  void *const t[] = {t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, t14, t15};
  return findMatchingCatch(t, 16);
}
void *__cxa_find_matching_catch_19(void *t0, void *t1, void *t2, void *t3, void *t4, void *t5, void *t6, void *t7, void *t8, void *t9, void *t10, void *t11, void *t12, void *t13, void *t14, void *t15, void *t16) {
  void *const t[] = {t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, t14, t15, t16};
  return findMatchingCatch(t, 17);
}
void *__cxa_find_matching_catch_20(void *t0, void *t1, void *t2, void *t3, void *t4, void *t5, void *t6, void *t7, void *t8, void *t9, void *t10, void *t11, void *t12, void *t13, void *t14, void *t15, void *t16, void *t17) {
  void *const t[] = {t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, t14, t15, t16, t17};
  return findMatchingCatch(t, 18);
}
void *__cxa_find_matching_catch_21(void *t0, void *t1, void *t2, void *t3, void *t4, void *t5, void *t6, void *t7, void *t8, void *t9, void *t10, void *t11, void *t12, void *t13, void *t14, void *t15, void *t16, void *t17, void *t18) {
  void *const t[] = {t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, t14, t15, t16, t17, t18};
  return findMatchingCatch(t, 19);
}
void *__cxa_find_matching_catch_22(void *t0, void *t1, void *t2, void *t3, void *t4, void *t5, void *t6, void *t7, void *t8, void *t9, void *t10, void *t11, void *t12, void *t13, void *t14, void *t15, void *t16, void *t17, void *t18, void *t19) {
  void *const t[] = {t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, t14, t15, t16, t17, t18, t19};
  return findMatchingCatch(t, 20);
}

void *__cxa_begin_catch(void *obj) {
  Header *h = headerOf(obj);
  if (h->rethrown) {
    h->rethrown = false;
  }
  uncaught--;
  if (h->handlers++ == 0) {
    h->nextCaught = caughtTop;
    caughtTop = h;
  }
  inFlight = nullptr;
  return h->adjusted;
}

void __cxa_end_catch(void) {
  Header *h = caughtTop;
  if (!h || --h->handlers > 0) {
    return;
  }
  caughtTop = h->nextCaught;
  if (!h->rethrown) {
    release(h);
  }
}

[[noreturn]] void __cxa_rethrow(void) {
  Header *h = caughtTop;
  if (!h) {
    abort();  // `throw;` outside a handler is std::terminate
  }
  h->rethrown = true;
  uncaught++;
  propagate(objectOf(h));
}

void *__cxa_get_exception_ptr(void *obj) { return headerOf(obj)->adjusted; }

std::type_info *__cxa_current_exception_type(void) {
  return caughtTop ? const_cast<std::type_info *>(caughtTop->type) : nullptr;
}

int __cxa_uncaught_exceptions(void) { return uncaught; }
bool __cxa_uncaught_exception(void) { return uncaught > 0; }

// std::exception_ptr (libc++'s exception.cpp calls these).
void *__cxa_current_primary_exception(void) {
  if (!caughtTop) {
    return nullptr;
  }
  Header *p = caughtTop->primary ? caughtTop->primary : caughtTop;
  p->refs++;
  return objectOf(p);
}

void __cxa_increment_exception_refcount(void *obj) {
  if (obj) {
    headerOf(obj)->refs++;
  }
}

void __cxa_decrement_exception_refcount(void *obj) {
  if (obj) {
    release(headerOf(obj));
  }
}

[[noreturn]] void __cxa_rethrow_primary_exception(void *obj) {
  if (!obj) {
    abort();
  }
  Header *p = headerOf(obj);
  Header *d = headerOf(__cxa_allocate_exception(0));
  d->type = p->type;
  d->refs = 1;
  d->primary = p;
  p->refs++;
  uncaught++;
  propagate(objectOf(d));
}

// setjmp and longjmp (see include/setjmp.h). The lowering replaces
// setjmp(env) with __wasm_setjmp(env, label, invocation): label numbers
// the setjmp within its function, invocation is unique to the running
// call of that function. After a longjmp has unwound to an invoke_ in
// some function, __wasm_setjmp_test(env, invocation) tells it whether env
// is one of its own setjmps (the label to resume at) or not (0: unwind on).
struct JmpBuf {
  void *invocation;
  uint32_t label;
};

void __wasm_setjmp(void *env, uint32_t label, void *invocation) {
  JmpBuf *jb = static_cast<JmpBuf *>(env);
  jb->invocation = invocation;
  jb->label = label;
}

uint32_t __wasm_setjmp_test(void *env, void *invocation) {
  JmpBuf *jb = static_cast<JmpBuf *>(env);
  return jb->invocation == invocation ? jb->label : 0;
}

[[noreturn]] void emscripten_longjmp(void *env, int value) {
  __THREW__ = static_cast<int>(reinterpret_cast<uintptr_t>(env));
  __threwValue = value != 0 ? value : 1;  // longjmp(env, 0) returns 1 from setjmp
  codeport_cxx_throw();
}

}  // extern "C"

// operator new. libc++abi for wasm32 is built without exceptions: its
// operator new aborts when malloc fails ("bad_alloc was thrown in
// -fno-exceptions mode"), ending the call as a crash. These replace its
// (weak) definitions with the standard behaviour: a failed allocation
// throws std::bad_alloc, which pybind11 turns into MemoryError (a figure
// too large for the memory limit, say) and the session goes on. The
// nothrow forms return null, as they must; deletes stay libc++abi's
// (free). Where nothing catches (numpy's and pandas' C++ is not lowered),
// the call ends as before.
void *operator new(std::size_t size) {
  void *p = std::malloc(size ? size : 1);
  if (!p) {
    throw std::bad_alloc();
  }
  return p;
}

void *operator new[](std::size_t size) { return ::operator new(size); }

void *operator new(std::size_t size, const std::nothrow_t &) noexcept {
  return std::malloc(size ? size : 1);
}

void *operator new[](std::size_t size, const std::nothrow_t &) noexcept {
  return std::malloc(size ? size : 1);
}

void *operator new(std::size_t size, std::align_val_t align) {
  std::size_t a = static_cast<std::size_t>(align);
  if (a < sizeof(void *)) {
    a = sizeof(void *);
  }
  void *p = std::aligned_alloc(a, (size + a - 1) / a * a);
  if (!p) {
    throw std::bad_alloc();
  }
  return p;
}

void *operator new[](std::size_t size, std::align_val_t align) { return ::operator new(size, align); }

void *operator new(std::size_t size, std::align_val_t align, const std::nothrow_t &) noexcept {
  std::size_t a = static_cast<std::size_t>(align);
  if (a < sizeof(void *)) {
    a = sizeof(void *);
  }
  return std::aligned_alloc(a, (size + a - 1) / a * a);
}

void *operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t &tag) noexcept {
  return ::operator new(size, align, tag);
}
