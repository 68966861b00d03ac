package server

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// accessLog writes one line per finished unary RPC ("finished call", at rpcLogLevel of
// its code: info for OK), with the fields go-grpc-middleware's logging interceptor
// gives it (which the streaming RPC still uses). Unlike that interceptor it does no
// work for a line that is not written: the RPC's identity goes into the context as one
// small value (callMeta), expanded into fields by ctxHandler only when a line is
// written, and the finish line is built only when its level is enabled (at warn, an OK
// RPC's line costs nothing).
//
// Lines of failed RPCs are bounded per caller by errs (errlog.go), when not nil.
type accessLog struct {
	log  *slog.Logger
	errs *errorLog
}

// callMeta is the unary RPC a context serves.
type callMeta struct {
	service, method string
}

type callMetaKey struct{}

// callMetaOf returns the RPC ctx serves, if accessLog put it there.
func callMetaOf(ctx context.Context) (*callMeta, bool) {
	cm, ok := ctx.Value(callMetaKey{}).(*callMeta)
	return cm, ok
}

// unary is the outermost unary interceptor: the request's ids into the log fields
// (requestFields), then the RPC's access line.
func (a accessLog) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	start := time.Now()
	ctx = requestFields(ctx, req)
	cm := &callMeta{service: info.FullMethod, method: info.FullMethod}
	if i := strings.LastIndexByte(info.FullMethod, '/'); i > 0 {
		cm.service, cm.method = strings.TrimPrefix(info.FullMethod[:i], "/"), info.FullMethod[i+1:]
	}
	ctx = context.WithValue(ctx, callMetaKey{}, cm)
	resp, err := h(ctx, req)
	code := status.Code(err)
	lvl := slog.Level(rpcLogLevel(code))
	var s summarized
	if err != nil && lvl > slog.LevelDebug && errors.As(err, &s) {
		lvl = slog.LevelDebug // the auth guard's summary counts it
	}
	if !a.log.Enabled(ctx, lvl) {
		return resp, err
	}
	if err != nil && lvl > slog.LevelDebug && a.errs != nil && !a.errs.allow(peerKey(ctx), code, err.Error()) {
		return resp, err // the error log's summary counts it
	}
	attrs := make([]slog.Attr, 0, 6) // at most 6: no growth
	attrs = append(attrs, slog.String("grpc.start_time", start.Format(time.RFC3339)))
	if d, ok := ctx.Deadline(); ok {
		attrs = append(attrs, slog.String("grpc.request.deadline", d.Format(time.RFC3339)))
	}
	attrs = append(attrs, slog.String("grpc.code", code.String()))
	if err != nil {
		attrs = append(attrs, slog.String("grpc.error", err.Error()))
		if errors.As(err, &s) {
			attrs = append(attrs, slog.Bool(summarizedField, true))
		}
	}
	ms := float32(time.Since(start).Nanoseconds()/1000) / 1000 // as the middleware's DurationToTimeMillisFields
	attrs = append(attrs, slog.String("grpc.time_ms", strconv.FormatFloat(float64(ms), 'g', -1, 32)))
	a.log.LogAttrs(ctx, lvl, "finished call", attrs...)
	return resp, err
}

// appendCallFields appends the fields of the RPC ctx serves, as go-grpc-middleware's
// logging interceptor names them, for a line being written, to attrs; nothing outside
// an RPC that accessLog saw.
func appendCallFields(attrs []slog.Attr, ctx context.Context) []slog.Attr {
	cm, ok := callMetaOf(ctx)
	if !ok {
		return attrs
	}
	attrs = append(attrs,
		slog.String("protocol", "grpc"),
		slog.String("grpc.component", "server"),
		slog.String("grpc.service", cm.service),
		slog.String("grpc.method", cm.method),
		slog.String("grpc.method_type", "unary"),
	)
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		attrs = append(attrs, slog.String("peer.address", p.Addr.String()))
	}
	return attrs
}
