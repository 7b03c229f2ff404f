/* global fetch */
// The service's API as the benchmark's own scripts call it (outside the measured load, which
// autocannon sends): a failed call stops the run with what the service answered.

export async function postJson(baseUrl, path, body) {
  const response = await fetch(baseUrl + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) {
    throw new Error(`POST ${path} answered ${response.status}: ${text}`);
  }
  return JSON.parse(text);
}

export async function postStatus(baseUrl, path, body) {
  const response = await fetch(baseUrl + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await response.text();
  return response.status;
}

export async function getJson(baseUrl, path, accessToken) {
  const response = await fetch(baseUrl + path, {
    headers: { authorization: `Bearer ${accessToken}` },
  });
  const text = await response.text();
  if (!response.ok) {
    throw new Error(`GET ${path} answered ${response.status}: ${text}`);
  }
  return JSON.parse(text);
}
