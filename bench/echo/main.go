// Command echo is the baseline for bench/run.sh: a bare gRPC server with one unary
// RPC, grpc.testing.TestService/UnaryCall, that answers with the request's payload
// (and its response_status message in username, so a templated string travels both
// ways). No interceptors, no logging, no store: what the gRPC stack alone costs on
// this machine. Reflection is on, so ghz needs no proto file.
//
//	go run ./echo -listen 127.0.0.1:0    # prints "listening ADDR" once it serves
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"

	"google.golang.org/grpc"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/reflection"
)

type echoServer struct {
	testgrpc.UnimplementedTestServiceServer
}

// UnaryCall echoes the payload back.
func (echoServer) UnaryCall(_ context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	return &testgrpc.SimpleResponse{Payload: req.GetPayload(), Username: req.GetResponseStatus().GetMessage()}, nil
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on (loopback only for benchmarks)")
	flag.Parse()
	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	gs := grpc.NewServer()
	testgrpc.RegisterTestServiceServer(gs, echoServer{})
	reflection.Register(gs)
	fmt.Printf("listening %s\n", lis.Addr())
	os.Stdout.Sync()
	go func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
		<-ch
		gs.Stop()
	}()
	if err := gs.Serve(lis); err != nil {
		log.Fatal(err)
	}
}
