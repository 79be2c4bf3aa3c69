// Package federate runs federated DaDiL over NATS.
package federate
