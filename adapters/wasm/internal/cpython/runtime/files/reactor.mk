# Included after CPython's Makefile: make -f Makefile -f codeport/reactor.mk
codeport/entry.o: codeport/entry.c $(PYTHON_HEADERS)
	$(CC) -c $(PY_STDMODULE_CFLAGS) -o $@ codeport/entry.c

codeport/python-reactor.wasm: codeport/entry.o $(LINK_PYTHON_DEPS)
	$(LINKCC) $(PY_CORE_LDFLAGS) $(LINKFORSHARED) -mexec-model=reactor -o $@ \
		codeport/entry.o $(LINK_PYTHON_OBJS) $(LIBS) $(MODLIBS) $(SYSLIBS)

.PHONY: codeport-reactor codeport-print-link
codeport-reactor: codeport/python-reactor.wasm
codeport-print-link:
	@echo '$(PY_CORE_LDFLAGS) $(LINKFORSHARED)'
