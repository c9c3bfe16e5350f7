package hdl

import "errors"

var (
	// ErrServerClosed is returned by ServeTCP and ServeUDP after Shutdown.
	ErrServerClosed = errors.New("hdl: server closed")
	// ErrBadConfig: New was given an unusable Config (wrapped with the field's name).
	ErrBadConfig = errors.New("hdl: bad config")
	// ErrRequestID: a reply whose RequestId differs from the request's.
	ErrRequestID = errors.New("hdl: reply request id differs")
	// ErrNoKey: a key file that holds no RSA private key.
	ErrNoKey = errors.New("hdl: no RSA private key in file")
)
