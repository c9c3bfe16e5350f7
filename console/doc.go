// Package console is pidnode's HTML console and public application form
// (docs/product.md §4.2): the pages a person with a browser uses on the
// admin listener, at "/" (the index page), /apply (the form and the status
// of an application) and /console/ (an SNAA's identifiers, forms, bulk
// uploads, keys, link checks, statistics, change feed and webhooks; the
// operator's application queue, SNAAs, keys and audit log).
//
// It owns: the html/template pages and the one style sheet, embedded; the
// sign-in (a key exchanged for a server-side session of package access),
// the session cookie (HttpOnly, SameSite=Strict, __Host- on TLS), the
// same-origin and CSRF checks of every form; the forms generated from the
// metadata model (form.go), with the model's descriptions and examples as
// help and errors named by the fields' labels; the field-by-field diff of
// two versions (diff.go: the history, the audit log, an edit conflict);
// the confirmation pages of destructive actions; CSV bulk uploads turned
// into JSON Lines; the people pages, joining by invitation and a person's
// sign-in, by password or OpenID Connect (people.go, over package people),
// each person's role checked on every page (people.NeedRole); and the check
// of a console session on an API request (Server.APISession), which admin
// calls when a request has no Authorization header.
//
// It has no read, write or decision of its own. Each page calls the
// functions the JSON API's handlers call, with the session's key where the
// API has the bearer key's: access.Admission (suspension, rate limits,
// maintenance), package read (identifiers, their history),
// write.Service (creates, updates, bulks), operator.Service (applications,
// SNAAs), access.Keys (issuing and revoking keys), stats.Service.Read (the
// chart), linkcheck.List (the namespace's link results). Its refusals are therefore the API's, and internal/httperr
// turns them into the problem a page shows (status, detail, the fields'
// errors next to their inputs).
//
// It must not: import admin, call an API route (in-process or over
// HTTP), or bind a listener. admin builds it over its own services
// (Config) and mounts it on its mux (Server.Mount), so that the admin
// listener's metrics, TLS and key refusal cover the pages too.
//
// Caveats: no page holds a script or an inline style (the
// Content-Security-Policy, PageCSP, allows neither); everything works
// without JavaScript. The pages are not API routes: /openapi.json does not
// describe them, and their HTML may change without a version.
package console
