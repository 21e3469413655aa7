package planned

import (
	"context"
	"net"
	"time"

	"github.com/redis/rueidis"
)

// One client per address (a sentinel or a data node), each command bounded.

func (r *run) client(addr string) (rueidis.Client, error) {
	if c, ok := r.clients[addr]; ok {
		return c, nil
	}
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, Password: r.o.Password,
		DisableCache: true, ForceSingleClient: true, ConnWriteTimeout: 2 * time.Second,
		Dialer: net.Dialer{Timeout: 2 * time.Second}})
	if err != nil {
		return nil, err
	}
	r.clients[addr] = c
	return c, nil
}

func (r *run) close() {
	for _, c := range r.clients {
		c.Close()
	}
}

// doMsg runs one command on addr, bounded by two seconds.
func (r *run) doMsg(ctx context.Context, addr string, args ...string) (rueidis.RedisMessage, error) {
	c, err := r.client(addr)
	if err != nil {
		return rueidis.RedisMessage{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return c.Do(cctx, c.B().Arbitrary(args...).Build()).ToMessage()
}

func (r *run) do(ctx context.Context, addr string, args ...string) error {
	_, err := r.doMsg(ctx, addr, args...)
	return err
}

func (r *run) info(ctx context.Context, addr string) (string, error) {
	m, err := r.doMsg(ctx, addr, "INFO", "replication")
	if err != nil {
		return "", err
	}
	return m.ToString()
}
