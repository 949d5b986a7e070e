<?php

declare(strict_types=1);

// The router of `php -S` for the tests' HTTP receiver: records each request (method, path,
// headers and raw body) as one JSON file in GABLE_RECEIVER_DIR and answers 200, except the
// first two requests under /fail-twice/, answered 503 with Retry-After: 0 so that a
// client's retries can be watched, and lists under /two-pages/, answered as a first page
// (has_more, next_cursor c2) without a cursor and as the last page with one.
$dir = getenv('GABLE_RECEIVER_DIR');
$path = $_SERVER['REQUEST_URI'];
$seen = count(glob("{$dir}/*.json"));
$file = sprintf('%s/%020d.json', $dir, hrtime(true));
file_put_contents("{$file}.tmp", json_encode([
    'method' => $_SERVER['REQUEST_METHOD'],
    'path' => $path,
    'headers' => getallheaders(),
    'body' => base64_encode(file_get_contents('php://input')),
]));
rename("{$file}.tmp", $file); // whole files only, for the test that polls the directory

header('Content-Type: application/json');
if (str_starts_with($path, '/fail-twice/') && $seen < 2) {
    http_response_code(503);
    header('Retry-After: 0');
    echo '{"error":{"code":"unavailable","message":"try again","request_id":"req_receiver"}}';
} elseif (str_starts_with($path, '/two-pages/')) {
    echo str_contains($path, 'cursor=')
        ? '{"data":[{"id":"b"}],"meta":{"has_more":false,"next_cursor":null}}'
        : '{"data":[{"id":"a"}],"meta":{"has_more":true,"next_cursor":"c2"}}';
} else {
    echo '{"data":{"ok":true}}';
}
