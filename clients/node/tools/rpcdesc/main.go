// Command rpcdesc writes, to stdout, a FileDescriptorSet (binary) of google/rpc/status.proto
// and google/rpc/error_details.proto with their imports, as compiled into the
// google.golang.org/genproto/googleapis/rpc module go.mod pins: the .proto files are not
// on this machine, and protoc reads the set instead (--descriptor_set_in). The Node
// client's generate.sh uses it for the error details it decodes (src/gen/google/rpc).
// The set carries no comments: compiled descriptors drop them.
package main

import (
	"os"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

func main() {
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	var add func(f protoreflect.FileDescriptor)
	add = func(f protoreflect.FileDescriptor) { // dependencies first, as protoc wants
		if seen[f.Path()] {
			return
		}
		seen[f.Path()] = true
		imports := f.Imports()
		for i := 0; i < imports.Len(); i++ {
			add(imports.Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(f))
	}
	add(status.File_google_rpc_status_proto)
	add(errdetails.File_google_rpc_error_details_proto)
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(set)
	if err != nil {
		os.Stderr.WriteString("rpcdesc: " + err.Error() + "\n")
		os.Exit(1)
	}
	os.Stdout.Write(b)
}
