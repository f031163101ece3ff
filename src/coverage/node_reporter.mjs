// Written by unguard (outside your checkout) for its coverage run only: a
// `node --test` reporter beside the command's own, naming each test and
// the file it is in (one JSON object a line).
export default async function* unguardTests(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const data = event.data || {};
    if (data.details && data.details.type === 'suite') continue;
    yield JSON.stringify({ file: data.file ?? null, name: data.name }) + '\n';
  }
}
