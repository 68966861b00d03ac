package server_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/voicearbiter/arbiter/arbiter"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
	"github.com/voicearbiter/arbiter/server"
	"github.com/voicearbiter/arbiter/store/memory"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// serve starts a server with opts on a real loopback port and returns its address.
func serve(t *testing.T, opts server.Options, logTo io.Writer) string {
	t.Helper()
	policy := &arbiter.Policy{Tools: map[string]*arbiter.Tool{"book_slot": {Name: "book_slot", SideEffect: true}}}
	if err := policy.Validate(); err != nil {
		t.Fatal(err)
	}
	if logTo == nil {
		logTo = io.Discard
	}
	log := slog.New(slog.NewJSONHandler(logTo, nil))
	svc := &arbiter.Service{Engine: &arbiter.Engine{Policy: policy}, Store: memory.New(nil), Clock: arbiter.SystemClock{}}
	opts.Logger = log
	gs, _ := server.NewGRPCServer(server.New(svc, log), opts)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	return lis.Addr().String()
}

func dial(t *testing.T, addr string, creds credentials.TransportCredentials) *grpc.ClientConn {
	t.Helper()
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func bearer(token string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+token)
}

// TestTenantIsolation: a token maps to a tenant; tenant B can neither read nor decide
// nor complete tenant A's session (NOT_FOUND, so ids don't leak), the same session id
// in B is a different session, a call without a token is UNAUTHENTICATED, and health
// and reflection stay open.
func TestTenantIsolation(t *testing.T) {
	toks, err := server.NewTokens(map[string]string{"token-for-acme": "acme", "token-for-globex": "globex"})
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	conn := dial(t, serve(t, server.Options{Tokens: toks}, &logs), nil)
	c := arbiterv1.NewArbiterServiceClient(conn)
	a, b := bearer("token-for-acme"), bearer("token-for-globex")

	reg, err := c.RegisterCall(a, &arbiterv1.RegisterCallRequest{SessionId: "shared-id", CallId: "c1", Tool: "book_slot"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetSession(a, &arbiterv1.GetSessionRequest{SessionId: "shared-id"}); err != nil {
		t.Fatalf("owner cannot read its session: %v", err)
	}
	if h, err := c.GetHistory(a, &arbiterv1.GetHistoryRequest{SessionId: "shared-id"}); err != nil || len(h.Entries) == 0 {
		t.Fatalf("owner cannot read its history: %v %v", h, err)
	}
	for name, call := range map[string]func() error{
		"GetSession": func() error {
			_, err := c.GetSession(b, &arbiterv1.GetSessionRequest{SessionId: "shared-id"})
			return err
		},
		"GetHistory": func() error {
			_, err := c.GetHistory(b, &arbiterv1.GetHistoryRequest{SessionId: "shared-id"})
			return err
		},
		"Decide": func() error {
			_, err := c.Decide(b, &arbiterv1.DecideRequest{SessionId: "shared-id", JobId: reg.JobId, Prepared: true})
			return err
		},
		"Complete": func() error {
			_, err := c.Complete(b, &arbiterv1.CompleteRequest{SessionId: "shared-id", JobId: reg.JobId, Outcome: arbiterv1.Outcome_OUTCOME_FAILED})
			return err
		},
		"ReportToolCallCancellation": func() error {
			_, err := c.ReportToolCallCancellation(b, &arbiterv1.ReportToolCallCancellationRequest{SessionId: "shared-id", CallIds: []string{"c1"}})
			return err
		},
		"CloseSession": func() error {
			_, err := c.CloseSession(b, &arbiterv1.CloseSessionRequest{SessionId: "shared-id"})
			return err
		},
	} {
		if code := status.Code(call()); code != codes.NotFound {
			t.Errorf("%s across tenants: %v, want NotFound", name, code)
		}
	}
	// B's own session with the same id is separate: registering c1 there opens a new job.
	regB, err := c.RegisterCall(b, &arbiterv1.RegisterCallRequest{SessionId: "shared-id", CallId: "c1", Tool: "book_slot"})
	if err != nil || regB.Disposition != arbiterv1.Disposition_DISPOSITION_EXECUTE {
		t.Fatalf("tenant B's own session: %v %v", regB, err)
	}
	// A's job is untouched by all of the above.
	gs, err := c.GetSession(a, &arbiterv1.GetSessionRequest{SessionId: "shared-id"})
	if err != nil || len(gs.Jobs) != 1 || gs.Jobs[0].State != arbiterv1.JobState_JOB_STATE_PREPARING || gs.Closed {
		t.Fatalf("tenant A's session changed: %v %v", gs, err)
	}
	for _, ctx := range []context.Context{context.Background(), bearer("wrong-token-123")} {
		_, err := c.GetSession(ctx, &arbiterv1.GetSessionRequest{SessionId: "shared-id"})
		if status.Code(err) != codes.Unauthenticated {
			t.Fatalf("no or bad token: %v, want Unauthenticated", err)
		}
	}
	hr, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || hr.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health without a token: %v %v", hr, err)
	}
	// Every log line of an arbiter RPC carries the session id, rejected ones included.
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if strings.Contains(line, "arbiter.v1.ArbiterService") && !strings.Contains(line, `"session_id":"shared-id"`) {
			t.Errorf("log line without session_id: %s", line)
		}
	}
}

func TestRateLimitPerTenant(t *testing.T) {
	toks, _ := server.NewTokens(map[string]string{"token-for-acme": "acme", "token-for-globex": "globex"})
	c := arbiterv1.NewArbiterServiceClient(dial(t, serve(t, server.Options{Tokens: toks, Limiter: &server.TenantLimiter{RPS: 0.001, Burst: 3}}, nil), nil))
	a := bearer("token-for-acme")
	for i := 0; i < 3; i++ {
		if _, err := c.ReportSpeech(a, &arbiterv1.ReportSpeechRequest{SessionId: "s", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_OUTPUT_START}); err != nil {
			t.Fatalf("request %d within the burst: %v", i, err)
		}
	}
	_, err := c.ReportSpeech(a, &arbiterv1.ReportSpeechRequest{SessionId: "s", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_OUTPUT_START})
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("over the limit: %v, want ResourceExhausted", err)
	}
	wantDetails(t, err, server.ReasonRateLimited, "", time.Second)
	// Another tenant has its own bucket.
	if _, err := c.ReportSpeech(bearer("token-for-globex"), &arbiterv1.ReportSpeechRequest{SessionId: "s", Event: arbiterv1.SpeechEvent_SPEECH_EVENT_MODEL_OUTPUT_START}); err != nil {
		t.Fatalf("other tenant limited too: %v", err)
	}
}

func TestMessageSizeCap(t *testing.T) {
	c := arbiterv1.NewArbiterServiceClient(dial(t, serve(t, server.Options{MaxRecvMsgSize: 4 << 10}, nil), nil))
	_, err := c.ReportTranscript(context.Background(), &arbiterv1.ReportTranscriptRequest{SessionId: "s", Text: strings.Repeat("a", 8<<10)})
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("oversized message: %v, want ResourceExhausted", err)
	}
}

func TestMetrics(t *testing.T) {
	m := server.NewMetrics()
	c := arbiterv1.NewArbiterServiceClient(dial(t, serve(t, server.Options{Metrics: m}, nil), nil))
	ctx := context.Background()
	reg, err := c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "m", CallId: "c1", Tool: "book_slot"})
	if err != nil {
		t.Fatal(err)
	}
	c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "m", CallId: "c2", Tool: "book_slot"})
	c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "m", CallId: "c3", Tool: "x", ToolChoice: arbiterv1.ToolChoice_TOOL_CHOICE_NONE})
	c.ReportTranscript(ctx, &arbiterv1.ReportTranscriptRequest{SessionId: "m", Text: "stop"})
	c.Decide(ctx, &arbiterv1.DecideRequest{SessionId: "m", JobId: reg.JobId, Wait: durationpb.New(0)})
	c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: "m", JobId: reg.JobId, Outcome: arbiterv1.Outcome_OUTCOME_CANCELLED})
	// A job the backend failed counts as failed, never as committed (issue 13).
	f, err := c.RegisterCall(ctx, &arbiterv1.RegisterCallRequest{SessionId: "m2", CallId: "c4", Tool: "book_slot"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(ctx, &arbiterv1.CompleteRequest{SessionId: "m2", JobId: f.JobId, Outcome: arbiterv1.Outcome_OUTCOME_FAILED, Error: "refused"}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`arbiter_calls_total{disposition="execute"} 2`,
		`arbiter_outcomes_total{outcome="cancelled"} 1`,
		`arbiter_outcomes_total{outcome="failed"} 1`,
		`arbiter_calls_total{disposition="duplicate"} 1`,
		`arbiter_calls_total{disposition="reject"} 1`,
		`arbiter_decisions_total{cause="stop",decision="cancel",tool="book_slot"} 1`,
		`arbiter_decisions_total{cause="failed",decision="cancel",tool="book_slot"} 1`,
		`arbiter_notes_total{deliver="now"} 1`,
		`arbiter_decide_wait_seconds_count 1`,
		`arbiter_call_pending_seconds_count 4`,
		`grpc_server_handled_total{grpc_code="OK",grpc_method="RegisterCall",grpc_service="arbiter.v1.ArbiterService",grpc_type="unary"} 4`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// TestTLS: TLS with a certificate made in the test, then mutual TLS: a client without
// a certificate is refused, one with a certificate from the client CA gets through.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := makeCA(t, "test CA")
	serverCert := makeLeaf(t, dir, "server", ca, caKey, true)
	clientCA, clientCAKey := makeCA(t, "client CA")
	clientCert := makeLeaf(t, dir, "client", clientCA, clientCAKey, false)
	writePEM(t, filepath.Join(dir, "client-ca.pem"), "CERTIFICATE", clientCA.Raw)
	roots := x509.NewCertPool()
	roots.AddCert(ca)

	plain, err := server.TLSConfig(serverCert+".pem", serverCert+".key", "")
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, server.Options{TLS: plain}, nil)
	conn := dial(t, addr, credentials.NewTLS(&tls.Config{RootCAs: roots, ServerName: "localhost"}))
	if _, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatalf("TLS health check: %v", err)
	}
	insecureConn := dial(t, addr, nil)
	if _, err := healthpb.NewHealthClient(insecureConn).Check(context.Background(), &healthpb.HealthCheckRequest{}); err == nil {
		t.Fatal("a plaintext client got through to a TLS server")
	}

	mutual, err := server.TLSConfig(serverCert+".pem", serverCert+".key", filepath.Join(dir, "client-ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	var mlog lockedBuffer
	maddr := serve(t, server.Options{TLS: mutual, UnauthLogInterval: 50 * time.Millisecond}, &mlog)
	noCert := dial(t, maddr, credentials.NewTLS(&tls.Config{RootCAs: roots, ServerName: "localhost"}))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := healthpb.NewHealthClient(noCert).Check(ctx, &healthpb.HealthCheckRequest{}); err == nil {
		t.Fatal("mTLS server accepted a client without a certificate")
	}
	// The failed handshake is in the log, summed up (grpc-go alone logs nothing).
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(mlog.String(), "failed TLS handshakes") && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if got := mlog.String(); !strings.Contains(got, `"msg":"failed TLS handshakes"`) || !strings.Contains(got, `"no_client_certificate":`) {
		t.Fatalf("no summary of the failed handshake in the log:\n%s", got)
	}
	pair, err := tls.LoadX509KeyPair(clientCert+".pem", clientCert+".key")
	if err != nil {
		t.Fatal(err)
	}
	withCert := dial(t, maddr, credentials.NewTLS(&tls.Config{RootCAs: roots, ServerName: "localhost", Certificates: []tls.Certificate{pair}}))
	if _, err := healthpb.NewHealthClient(withCert).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatalf("mTLS client with a certificate: %v", err)
	}
	if _, err := server.TLSConfig(filepath.Join(dir, "missing.pem"), serverCert+".key", ""); err == nil || !strings.Contains(err.Error(), "missing.pem") {
		t.Fatalf("missing certificate: %v", err)
	}
}

func makeCA(t *testing.T, name string) (*x509.Certificate, *ecdsa.PrivateKey) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert, key
}

// makeLeaf writes NAME.pem and NAME.key in dir and returns dir/NAME.
func makeLeaf(t *testing.T, dir, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, serverAuth bool) string {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	usage := x509.ExtKeyUsageClientAuth
	if serverAuth {
		usage = x509.ExtKeyUsageServerAuth
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	base := filepath.Join(dir, name)
	writePEM(t, base+".pem", "CERTIFICATE", der)
	writePEM(t, base+".key", "EC PRIVATE KEY", kb)
	return base
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
