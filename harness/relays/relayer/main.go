//go:build ignore

// Command relayer is the relayer v2 setup relaybench benchmarks: the
// fiatjaf/relayer framework with its PostgreSQL event store, accepting every
// valid event. It is a separate module (go.mod.txt, go.sum.txt beside this
// file, installed as go.mod and go.sum): the harness copies the three files
// into its cache and builds them there, so relaybench itself does not depend
// on relayer. The build tag keeps this file out of the relaybench module.
//
// Usage: relayer -host 127.0.0.1 -port PORT, with the PostgreSQL URL in
// POSTGRESQL_DATABASE. It prints "listening ws://HOST:PORT" once bound and
// stops on SIGTERM or SIGINT.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/fiatjaf/eventstore"
	"github.com/fiatjaf/eventstore/postgresql"
	"github.com/fiatjaf/relayer/v2"
	"github.com/nbd-wtf/go-nostr"
)

type relay struct{ store *postgresql.PostgresBackend }

func (r *relay) Name() string                                             { return "relayer" }
func (r *relay) Init() error                                              { return nil }
func (r *relay) Storage(context.Context) eventstore.Store                 { return r.store }
func (r *relay) AcceptEvent(context.Context, *nostr.Event) (bool, string) { return true, "" }

// quietLog drops relayer's per-connection info lines and keeps warnings and
// errors on stderr.
type quietLog struct{ l *log.Logger }

func (quietLog) Infof(string, ...any)          {}
func (q quietLog) Warningf(f string, v ...any) { q.l.Printf("warning: "+f, v...) }
func (q quietLog) Errorf(f string, v ...any)   { q.l.Printf("error: "+f, v...) }

func main() {
	host := flag.String("host", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 7447, "port to listen on")
	flag.Parse()
	dbURL := os.Getenv("POSTGRESQL_DATABASE")
	if dbURL == "" {
		log.Fatal("relayer: POSTGRESQL_DATABASE is not set")
	}

	// KeepRecentEvents: without it eventstore's PostgreSQL backend deletes,
	// after every save, all but the newest 100 events of the author (an
	// accepted event can vanish a moment after its OK true). relaybench
	// measures relays that keep what they accept; this keeps them all.
	r := &relay{store: &postgresql.PostgresBackend{DatabaseURL: dbURL, KeepRecentEvents: true}}
	srv, err := relayer.NewServer(r)
	if err != nil {
		log.Fatalf("relayer: %v", err)
	}
	srv.Log = quietLog{log.New(os.Stderr, "relayer: ", log.LstdFlags)}

	started := make(chan bool)
	done := make(chan error, 1)
	go func() { done <- srv.Start(*host, *port, started) }()
	select {
	case <-started:
		fmt.Printf("listening ws://%s\n", net.JoinHostPort(*host, strconv.Itoa(*port)))
	case err := <-done:
		log.Fatalf("relayer: %v", err)
	}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-sig:
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		srv.Shutdown(ctx)
		cancel()
		r.store.Close()
	case err := <-done:
		if err != nil {
			log.Fatalf("relayer: %v", err)
		}
	}
}
