package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/replay"
)

// exportCmd is `arbiter export`.
type exportCmd struct {
	Target  string        `required:"" placeholder:"HOST:PORT" help:"The arbiter server to read the session from."`
	Token   string        `env:"ARBITER_TOKEN" help:"Bearer token (the server's --auth-tokens-file): the session is looked up in its tenant. Sent in clear without --tls or --tls-ca."`
	TLS     bool          `name:"tls" help:"Connect with TLS, trusting the system's roots."`
	TLSCA   string        `name:"tls-ca" type:"existingfile" help:"Connect with TLS, trusting this PEM CA."`
	Partial bool          `help:"Export a history that does not hold the whole session (entries dropped or clipped, or kept only from some point on) instead of failing; the trace may then not replay as the session ran."`
	Timeout time.Duration `default:"10s" help:"Deadline of the GetHistory call."`
	Session string        `arg:"" help:"The session id."`
}

// Run reads the session's history (GetHistory) and writes it as a trace to stdout
// (replay.Export); warnings about what the trace cannot say go to stderr. The exit
// code is 1 when the server refuses (NOT_FOUND: no such session in the token's
// tenant) or the history is incomplete without --partial.
func (c *exportCmd) Run(env *runEnv) error {
	creds := insecure.NewCredentials()
	if c.TLS || c.TLSCA != "" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if c.TLSCA != "" {
			pem, err := os.ReadFile(c.TLSCA)
			if err != nil {
				return fmt.Errorf("--tls-ca: %v", err)
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				return fmt.Errorf("--tls-ca: %s holds no PEM certificate", c.TLSCA)
			}
		}
		creds = credentials.NewTLS(cfg)
	}
	conn, err := grpc.NewClient(c.Target, grpc.WithTransportCredentials(creds))
	if err != nil {
		return fmt.Errorf("--target: %v", err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(env.ctx, c.Timeout)
	defer cancel()
	if c.Token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+c.Token)
	}
	h, err := arbiterv1.NewArbiterServiceClient(conn).GetHistory(ctx, &arbiterv1.GetHistoryRequest{SessionId: c.Session})
	if err != nil {
		return fmt.Errorf("GetHistory: %v", err)
	}
	return replay.Export(h, env.stdout, env.stderr, replay.ExportOptions{Partial: c.Partial})
}
