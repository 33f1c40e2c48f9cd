//go:build !unix

package porthold

import "errors"

func bind([4]byte, int) (int, error) {
	return -1, errors.New("not supported on this system")
}

func closeFD(int) {}
