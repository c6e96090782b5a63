// Package containers gives a gateway OpenAI-style containers over any
// port.CodeExecutionPort: a container is one session of the port, with a
// name, an owner (the caller's tenant), the files put into it or produced
// in it, and an idle expiry, anchored at its last activity, as OpenAI's
// containers have. Calls that name a container continue its state: its
// Python variables and its files.
//
// A Store keeps the containers of one gateway process. Three things use
// it: the Responses tool when an operator enables containers (package
// gateway/responses), the Messages tool's container reuse (package
// gateway/messages), and an OpenAI Containers API (NewHandler), which
// `codeport serve` mounts when enabled.
//
//	store := containers.New(p,
//		containers.WithFileSource(files),   // the gateway's file store, for file_ids
//		containers.WithMaxContainers(20),   // per tenant
//	)
//	defer store.Close()
//	c, err := store.Create(ctx, containers.CreateParams{Name: "analysis", FileIDs: []string{"file-abc"}})
//	res, produced, err := store.Execute(ctx, c.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x = 1"})
//	// a later call naming c.ID sees x, the uploaded file and what was produced
//
// Tenants: the owner of each call is read from its context by the
// function given to WithTenantOf (server.CallerOf for a handler behind
// server.Guard). Another tenant's container answers as an unknown one.
// The store's own background work (ending an expired container, Close)
// runs in the context WithBackgroundContext derives from the context that
// created the container, so a port that needs the caller there (the port
// server.Guard.Port returns) is given it.
//
// Several gateway processes: with WithNodeID, every container id carries
// the node's id (RoutePattern), so that a proxy can send each call to the
// process that holds the container, as session ids are routed.
//
// Containers live in the process's memory, as their sessions do: they end
// with the process. Limits on bytes are the port's (a file over its file
// limit, a workspace over its quota); the store adds a count of
// containers per tenant and of files per container.
package containers
