// Command khatrusink is a generic relay that neither relaybench nor any peer
// tool wrote, for measuring both on neutral ground: khatru v0.19.1 (the
// framework most Go relays are built on) as it comes, with a store that
// keeps nothing. Every message goes through khatru's own code: WebSocket
// frames by fasthttp/websocket, JSON parsing, the id and signature checks,
// the deletion lookup (QueryEvents answers nothing), the store (StoreEvent
// keeps nothing) and an OK per event.
//
//	go run ./bench/khatrusink -addr 127.0.0.1:0
//
// It prints "listening ws://HOST:PORT" once it accepts connections, and on
// SIGINT or SIGTERM the events it was handed, then exits.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/fiatjaf/khatru"
	"github.com/nbd-wtf/go-nostr"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (load stays on 127.0.0.1)")
	flag.Parse()

	var stored atomic.Int64
	rl := khatru.NewRelay()
	rl.Log = log.New(io.Discard, "", 0)
	rl.Info.Name = "khatrusink"
	rl.StoreEvent = append(rl.StoreEvent, func(context.Context, *nostr.Event) error {
		stored.Add(1)
		return nil
	})
	rl.QueryEvents = append(rl.QueryEvents, func(context.Context, nostr.Filter) (chan *nostr.Event, error) {
		ch := make(chan *nostr.Event)
		close(ch)
		return ch, nil
	})

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "khatrusink:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: rl}
	fmt.Printf("listening ws://%s\n", ln.Addr())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sig
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, "khatrusink:", err)
		os.Exit(1)
	}
	fmt.Printf("khatrusink: %d events stored (and forgotten)\n", stored.Load())
}
