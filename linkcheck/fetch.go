package linkcheck

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"pidnode/internal/outbound"
)

// ClassHTTP is the error class of a check that got a response whose final
// status is not 2xx (the other classes are outbound.Classify's).
const ClassHTTP = "http"

// headRefused reports whether a HEAD answer means "ask with GET": Method
// Not Allowed, Not Implemented, and Forbidden, which some servers and CDNs
// give HEAD alone.
func headRefused(status int) bool {
	return status == http.StatusMethodNotAllowed || status == http.StatusNotImplemented || status == http.StatusForbidden
}

// fetch checks one URL: HEAD, and GET when HEAD is refused (after the
// host's delay, wait), reading at most maxBytes of the body. It never
// returns an error: the failure is the outcome.
func (c *Checker) fetch(ctx context.Context, rawURL string, wait func(context.Context) bool) outcome {
	start := time.Now()
	o := c.fetchOnce(ctx, http.MethodHead, rawURL)
	if headRefused(o.status) && wait(ctx) {
		o = c.fetchOnce(ctx, http.MethodGet, rawURL)
	}
	o.took = time.Since(start)
	o.at = c.now()
	return o
}

func (c *Checker) fetchOnce(ctx context.Context, method, rawURL string) outcome {
	var o outcome
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, rawURL, nil)
	if err != nil {
		o.class = outbound.ClassOther // not a URL; checkable ones are parsed before they are queued
		return o
	}
	req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	resp, err := c.client.Do(req)
	if err != nil {
		o.class = outbound.Classify(err)
		return o
	}
	defer resp.Body.Close()
	o.status = resp.StatusCode
	if resp.Request != nil && resp.Request.URL != nil {
		o.finalURL = resp.Request.URL.String()
	}
	if method == http.MethodGet {
		n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, c.maxBytes))
		o.bytes = n
		if err != nil && !errors.Is(err, io.EOF) {
			// The status came: a body cut short does not change it, unless
			// the check timed out.
			if outbound.Classify(err) == outbound.ClassTimeout {
				o.class = outbound.ClassTimeout
				return o
			}
		}
	}
	o.ok = o.status >= 200 && o.status <= 299
	if !o.ok {
		o.class = ClassHTTP
	}
	return o
}
