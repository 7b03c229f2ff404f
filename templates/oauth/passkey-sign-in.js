// Keygate's hosted sign-in page: signing in with a passkey. Served as a file of Keygate's own
// origin (the page's policy allows script from 'self' only, and no inline script); the page
// works without it for the password and the mailed code. The options, with their challenge,
// come in the form's data-options; the assertion goes back in its hidden `passkey` field.
/* global document, window, navigator, atob, btoa, PublicKeyCredential, AbortController */
'use strict';

(function () {
  const form = document.getElementById('passkey');
  if (form === null || typeof window.PublicKeyCredential !== 'function' || !navigator.credentials) {
    return;
  }
  const field = form.querySelector('input[name="passkey"]');
  const status = document.getElementById('passkey-error');
  const options = JSON.parse(form.dataset.options);
  let pending = null;

  function bytes(text) {
    const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
    const raw = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
    return Uint8Array.from(raw, (c) => c.charCodeAt(0));
  }

  function text(buffer) {
    if (buffer === null || buffer === undefined) {
      return undefined;
    }
    let raw = '';
    for (const byte of new Uint8Array(buffer)) {
      raw += String.fromCharCode(byte);
    }
    return btoa(raw).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  function publicKey() {
    return {
      challenge: bytes(options.challenge),
      rpId: options.rpId,
      timeout: options.timeout,
      userVerification: options.userVerification,
      allowCredentials: (options.allowCredentials || []).map((c) => ({
        type: c.type,
        id: bytes(c.id),
        transports: c.transports,
      })),
    };
  }

  function submit(credential) {
    const response = credential.response;
    field.value = JSON.stringify({
      id: credential.id,
      rawId: text(credential.rawId),
      type: credential.type,
      response: {
        clientDataJSON: text(response.clientDataJSON),
        authenticatorData: text(response.authenticatorData),
        signature: text(response.signature),
        userHandle: text(response.userHandle),
      },
      authenticatorAttachment: credential.authenticatorAttachment || undefined,
      clientExtensionResults: credential.getClientExtensionResults(),
    });
    form.submit();
  }

  function failed() {
    status.textContent = form.dataset.failed;
    status.focus();
  }

  // Conditional UI: the browser offers the passkeys in the e-mail field's autofill.
  async function autofill() {
    if (
      typeof PublicKeyCredential.isConditionalMediationAvailable !== 'function' ||
      !(await PublicKeyCredential.isConditionalMediationAvailable())
    ) {
      return;
    }
    pending = new AbortController();
    try {
      const credential = await navigator.credentials.get({
        publicKey: publicKey(),
        mediation: 'conditional',
        signal: pending.signal,
      });
      if (credential !== null) {
        submit(credential);
      }
    } catch {
      // Aborted for the button, or dismissed: the page stays as it is.
    }
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (pending !== null) {
      pending.abort();
      pending = null;
    }
    status.textContent = '';
    try {
      const credential = await navigator.credentials.get({ publicKey: publicKey() });
      if (credential === null) {
        failed();
      } else {
        submit(credential);
      }
    } catch {
      failed();
    }
  });

  form.hidden = false;
  void autofill();
})();
