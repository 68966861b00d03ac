package server

import (
	"errors"
	"strconv"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	protocodec "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/voicearbiter/arbiter/arbiter"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// Requests that do not decode (a string that is not valid UTF-8, a Struct nested
// deeper than protobuf's recursion limit, a truncated field) are the caller's fault:
// INVALID_ARGUMENT naming the field, like any other bad field, not grpc-go's
// INTERNAL "failed to unmarshal the received message".
//
// Why a codec that does not fail: grpc-go v1.85 decodes a request in recv
// (rpc_util.go) and turns any error of the codec's Unmarshal into
// status.Errorf(codes.Internal, "grpc: failed to unmarshal the received message: %v",
// err), so a status error from the codec loses its code; and serverStream.RecvMsg
// writes that status to the stream at once, before the handler (or any interceptor:
// for a unary RPC the generated handler decodes before it calls the interceptor
// chain) could say otherwise. So for the arbiter's own messages the codec reports
// success, leaves the message empty and marks it with what failed, in two unknown
// fields of numbers protobuf reserves for itself (19000-19999: no .proto may declare
// them); after authentication and the rate limit, the chain refuses a marked request
// before its handler runs (innermost for unary RPCs, refuseUndecodedStream for
// Watch). Other services' messages (health, reflection) fail as before.

// Unknown-field numbers of the mark: the field at fault, and what is wrong with it.
const (
	undecodedField   protowire.Number = 19998
	undecodedProblem protowire.Number = 19999
)

// errUndecoded is the cause of the Invalid error of a request that did not decode
// (reason MALFORMED_REQUEST).
var errUndecoded = errors.New("request did not decode")

// codec is grpc-go's proto codec, except that a request of package arbiter.v1 that
// does not decode is marked (see above) instead of failing.
type codec struct{ encoding.CodecV2 }

// newCodec returns the server's codec (grpc.ForceServerCodecV2).
func newCodec() codec { return codec{encoding.GetCodecV2(protocodec.Name)} }

func (c codec) Unmarshal(data mem.BufferSlice, v any) error {
	err := c.CodecV2.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	m, ok := v.(proto.Message)
	if !ok || m.ProtoReflect().Descriptor().ParentFile().Package() != arbiterv1.File_arbiter_v1_arbiter_proto.Package() {
		return err
	}
	field, problem := badField(m.ProtoReflect(), data.Materialize())
	if problem == "" {
		problem = "does not decode: " + err.Error()
	}
	proto.Reset(m)
	var mark []byte
	if field != "" {
		mark = protowire.AppendTag(mark, undecodedField, protowire.BytesType)
		mark = protowire.AppendString(mark, field)
	}
	mark = protowire.AppendTag(mark, undecodedProblem, protowire.BytesType)
	mark = protowire.AppendString(mark, problem)
	m.ProtoReflect().SetUnknown(mark)
	return nil
}

// badField finds the top-level field of message m's encoding b that does not decode:
// each field is decoded alone into an empty message of m's type, and the first that
// fails is named as the API names it ("text", "call_ids[1]", "args"), with what is
// wrong with it. It returns "" and "" when every field decodes alone, and "" and a
// problem when the encoding itself is broken before any field is known.
func badField(m protoreflect.Message, b []byte) (field, problem string) {
	fields := m.Descriptor().Fields()
	seen := map[protowire.Number]int{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", "is not a well-formed protobuf message: " + protowire.ParseError(n).Error()
		}
		fd := fields.ByNumber(num)
		name := ""
		if fd != nil {
			name = string(fd.Name())
			if fd.IsList() {
				name += "[" + strconv.Itoa(seen[num]) + "]"
			}
			seen[num]++
		}
		vn := protowire.ConsumeFieldValue(num, typ, b[n:])
		if vn < 0 {
			return name, "is not well-formed protobuf: " + protowire.ParseError(vn).Error()
		}
		one := b[:n+vn]
		b = b[n+vn:]
		if fd == nil {
			continue // an unknown field decodes as unknown bytes
		}
		if err := proto.Unmarshal(one, m.New().Interface()); err != nil {
			if fd.Kind() == protoreflect.StringKind && typ == protowire.BytesType {
				if s, sn := protowire.ConsumeBytes(one[n:]); sn >= 0 && !utf8.Valid(s) {
					return name, "is not valid UTF-8 (a protobuf string must be)"
				}
			}
			return name, "does not decode: " + err.Error()
		}
	}
	return "", ""
}

// undecoded returns the Invalid error of a request the codec marked, or nil for any
// other request.
func undecoded(req any) error {
	m, ok := req.(proto.Message)
	if !ok {
		return nil
	}
	var field, problem string
	b := m.ProtoReflect().GetUnknown()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeField(b)
		if n < 0 {
			return nil
		}
		if typ == protowire.BytesType && (num == undecodedField || num == undecodedProblem) {
			_, _, tn := protowire.ConsumeTag(b)
			v, _ := protowire.ConsumeString(b[tn:n])
			if num == undecodedField {
				field = v
			} else {
				problem = v
			}
		}
		b = b[n:]
	}
	if problem == "" {
		return nil
	}
	name := string(m.ProtoReflect().Descriptor().Name())
	if field == "" {
		return &arbiter.Error{Kind: arbiter.Invalid, Message: "the " + name + " " + problem, Err: errUndecoded}
	}
	return &arbiter.Error{Kind: arbiter.Invalid, Field: field, Message: field + ": " + problem, Err: errUndecoded}
}

// refuseUndecodedStream makes the stream's RecvMsg refuse a message the codec could
// not decode (undecoded).
func refuseUndecodedStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return h(srv, checkedStream{ss})
}

// checkedStream is a server stream whose RecvMsg refuses undecoded messages.
type checkedStream struct{ grpc.ServerStream }

func (c checkedStream) RecvMsg(m any) error {
	if err := c.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	return undecoded(m)
}
