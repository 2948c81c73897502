// etcdwatch plays flanneld's part against a real etcd for the keepalive tests: it watches a prefix as flanneld
// watches its subnets (WithRequireLeader), and puts a key under it every 100 ms so that something flows.
//
//	etcdwatch ENDPOINT   prints "watching" once the first event came, "event VALUE" for each event,
//	                     "watch closed: ERROR" when the watch ends (it then watches again), "put failed: ERROR"
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

const prefix = "/etcdwatch/"

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: etcdwatch ENDPOINT")
		os.Exit(2)
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{os.Args[1]}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer client.Close()
	go put(client)
	watch(client)
}

func put(client *clientv3.Client) {
	for i := 0; ; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if _, err := client.Put(ctx, prefix+"tick", strconv.Itoa(i)); err != nil {
			fmt.Printf("put failed: %v\n", err)
		}
		cancel()
		time.Sleep(100 * time.Millisecond)
	}
}

func watch(client *clientv3.Client) {
	first := true
	for {
		ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(context.Background()))
		var err error
		for response := range client.Watch(ctx, prefix, clientv3.WithPrefix()) {
			if err = response.Err(); err != nil {
				break
			}
			for _, event := range response.Events {
				if first {
					fmt.Println("watching")
					first = false
				}
				fmt.Printf("event %s\n", event.Kv.Value)
			}
		}
		fmt.Printf("watch closed: %v\n", err)
		cancel()
		time.Sleep(100 * time.Millisecond)
	}
}
