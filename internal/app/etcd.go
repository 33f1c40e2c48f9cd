package app

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// etcd client settings of one shop instance.
//
//   - DialTimeout: clientv3.New dials nothing at once without credentials,
//     so a member that is down at start shows up in 503s, not as a
//     start-up failure; the timeout bounds the dials that follow.
//   - Logger: the client logs every retried call at warn level through zap;
//     with a member down that is one line per request. The shop reports
//     what matters (503s, /readyz) itself.
//   - DialKeepAliveTime, DialKeepAliveTimeout: a member that hangs (paused,
//     cut off) keeps its connection open and never answers; a ping every
//     second that must answer within half a second closes that connection,
//     and the client sends its requests to the other members.
const (
	etcdDialTimeout      = 2 * time.Second
	etcdKeepAliveTime    = time.Second
	etcdKeepAliveTimeout = 500 * time.Millisecond
)

// newEtcdClient returns a client on endpoints; the caller closes it.
func newEtcdClient(endpoints []string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints:            endpoints,
		DialTimeout:          etcdDialTimeout,
		DialKeepAliveTime:    etcdKeepAliveTime,
		DialKeepAliveTimeout: etcdKeepAliveTimeout,
		Logger:               zap.NewNop(),
	})
}

// ErrInvalidEtcdEndpoint is wrapped by errors about a malformed etcd
// endpoint.
var ErrInvalidEtcdEndpoint = errors.New("app: invalid etcd endpoint")

// CheckEtcdEndpoint reports whether e is host:port or http(s)://host:port,
// returning an error wrapping ErrInvalidEtcdEndpoint if not.
func CheckEtcdEndpoint(e string) error {
	hostPort := e
	if strings.Contains(e, "://") {
		u, err := url.Parse(e)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || (u.Path != "" && u.Path != "/") {
			return fmt.Errorf("%w %q: want host:port or http://host:port", ErrInvalidEtcdEndpoint, e)
		}
		hostPort = u.Host
	}
	if CheckRedisAddr(hostPort) != nil {
		return fmt.Errorf("%w %q: want host:port or http://host:port", ErrInvalidEtcdEndpoint, e)
	}
	return nil
}
