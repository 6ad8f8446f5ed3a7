"""gRPC plumbing every service and client shares: channels to the services (with
replicas, retries, deadlines, the token and TLS), the server with its interceptors,
request bounds, paging, cancellation and tracing."""
