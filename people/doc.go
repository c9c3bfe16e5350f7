// Package people owns the accounts of the people of an SNAA and of the
// operator (docs/product.md §4.6): invitations, passwords, the optional
// TOTP second factor, the lockout after repeated failures, roles, and the
// verification of an OpenID Connect sign-in.
//
// # What it owns
//
//   - invitations (Service.Invite): an e-mail address and a role, a token
//     shown once to the inviter, stored by its hash, single use, expiring
//     after Config.InviteTTL;
//   - accepting one (Service.Accept): a password hashed with argon2id
//     (password.go, the PHC string form), or the OpenID Connect subject the
//     invitee signed in as, and, if asked, a TOTP secret (totp.go, RFC 6238),
//     shown once;
//   - signing in (Service.SignIn): the password and code checked, the
//     account locked for Config.LockFor after Config.LockAfter failures
//     (lockout.go), the same argon2id work done for an unknown address as
//     for a known one, so that neither the answer nor its time tells
//     whether an account exists; Service.SignInSubject for a verified
//     OpenID Connect subject;
//   - the people of an SNAA (List, SetRole, Remove: removing deletes the
//     person's sessions in the same transaction, so in a cluster they end
//     on every node as the change applies);
//   - the OpenID Connect relying party (oidc.go, over coreos/go-oidc):
//     discovery, the authorisation URL, the code exchange, and the ID
//     token's signature, issuer, audience, expiry and nonce.
//
// # What it must not do
//
// It serves no HTTP and sets no cookie (its one HTTP use is the OpenID
// Connect client's requests to the provider); the console and the API
// start the session (package access) and map its errors in one place
// (internal/httperr). A password hash or TOTP secret never leaves it: the
// people it returns are registry.PersonView, and it logs neither.
//
// # Caveats
//
// The lockout counts failures in this node's memory: in a cluster each node
// counts its own, so an attacker spreading guesses over n nodes gets n
// times Config.LockAfter guesses per Config.LockFor (the per-address limit
// of the fronts applies as well). The TOTP secret is stored as it is, in
// the replicated people bucket; it is shown once and in no view.
package people
