// Package enrol is the admin API client the write benchmarks share
// (bench/cmd/admincreate, bench/cmd/clusterlag): one JSON call, and the
// enrolment of a fresh SNAA through the operator routes.
package enrol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// Call sends body as JSON to url with the bearer key and decodes the reply
// into out (if not nil); a status other than want is an error naming it.
func Call(hc *http.Client, method, url, bearer string, body any, want int, out any) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(method, url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %d, want %d: %s", method, url, resp.StatusCode, want, rb)
	}
	if out != nil {
		return json.Unmarshal(rb, out)
	}
	return nil
}

// SNAA files an application for the organisation and approves it with the
// operator key, under prefix, at the admin API root; it returns the new
// SNAA's namespace and API key.
func SNAA(hc *http.Client, root, opKey, prefix, organisation string) (ns, key string, err error) {
	contact := map[string]string{"name": "Bench Operator", "email": "bench@lab.example.org"}
	var app struct{ ID string }
	if err := Call(hc, "POST", root+"/ops/v1/applications", opKey, map[string]any{
		"organisation": organisation, "technical_contact": contact, "administrative_contact": contact,
		"policy_version": "1.0", "maintenance_statement": "Benchmark data, deleted after the run.",
	}, http.StatusCreated, &app); err != nil {
		return "", "", err
	}
	var res struct {
		SNAA struct{ Namespace string }
		Key  struct{ Secret string }
	}
	if err := Call(hc, "POST", root+"/ops/v1/applications/"+app.ID+"/approve", opKey,
		map[string]any{"prefixes": []string{prefix}, "note": "bench"}, http.StatusOK, &res); err != nil {
		return "", "", err
	}
	return res.SNAA.Namespace, res.Key.Secret, nil
}
