// Package deploy holds no code: it is where the deployment files are
// tested. kubernetes/ has the manifests of a multi-node codeport (a
// StatefulSet of nodes behind a headless Service, an nginx router that
// sends each session's calls to the node its id names, their ConfigMaps
// and PodDisruptionBudgets); the repository's Dockerfile builds the image
// they run.
//
// The test decodes every manifest strictly into the Kubernetes API types,
// as the API server would (an unknown or misspelt field is an error), and
// checks what wires the pieces together, which no schema can: selectors
// that match the pods they mean, the router's upstream names and ports
// against the Service and the StatefulSet, its session route against
// server.SessionRoutePattern, codeport's own settings (loaded with
// binding's loader) against the volumes, probes and resources:
//
//	go test ./deploy
//
// To apply the manifests, see "Kubernetes" in docs/deployment.md:
//
//	kubectl apply -f deploy/kubernetes/namespace.yaml
//	kubectl -n codeport create secret generic codeport-auth --from-file=token=./token
//	kubectl apply -k deploy/kubernetes
package deploy
