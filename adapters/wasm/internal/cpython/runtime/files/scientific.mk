# Included after CPython's Makefile: make -f Makefile -f codeport/scientific.mk
# SCI_MODULES: the modules' archives; SCI_LIBS: the static libraries they link.
codeport/scientific/entry.o: codeport/scientific/entry.c codeport/scientific/scientific_modules.h $(PYTHON_HEADERS)
	$(CC) -c $(PY_STDMODULE_CFLAGS) -DCODEPORT_SCIENTIFIC -Icodeport/scientific -o $@ codeport/scientific/entry.c

codeport/scientific/exceptions.o: codeport/scientific/exceptions.cpp
	$(CC) -c -x c++ -std=c++17 -O2 -fexceptions -o $@ codeport/scientific/exceptions.cpp

codeport/scientific/python.wasm: codeport/scientific/entry.o codeport/scientific/exceptions.o $(LINK_PYTHON_DEPS)
	$(LINKCC) $(PY_CORE_LDFLAGS) $(LINKFORSHARED) -mexec-model=reactor -Wl,--fatal-warnings -o $@ \
		codeport/scientific/entry.o codeport/scientific/exceptions.o $(LINK_PYTHON_OBJS) \
		-Wl,--whole-archive $(SCI_MODULES) -Wl,--no-whole-archive $(SCI_LIBS) \
		-lc++ -lc++abi -lc-printscan-long-double -lwasi-emulated-mman $(LIBS) $(MODLIBS) $(SYSLIBS)
