<?php

declare(strict_types=1);

namespace Gable\Tests;

use Gable\Client;
use Gable\Collection;
use Gable\Exception\GableException;
use Gable\Exception\ServerException;
use Gable\Payments;
use PHPUnit\Framework\TestCase;

/** The client's own behaviour, against the tests' HTTP receiver rather than Gable. */
final class ClientTest extends TestCase
{
    private Receiver $receiver;

    protected function setUp(): void
    {
        $this->receiver = new Receiver();
    }

    protected function tearDown(): void
    {
        $this->receiver->stop();
    }

    public function testEveryCollectionIsAPropertyAndByName(): void
    {
        // That the list is the served description's: AgainstGableTest.
        $client = new Client('gbl_test_x', $this->receiver->url);
        $this->assertNotEmpty(Client::COLLECTIONS);
        foreach (Client::COLLECTIONS as $property => $name) {
            $this->assertInstanceOf(Collection::class, $client->{$property});
            $this->assertSame($name, $client->{$property}->name);
            $this->assertSame($client->{$property}, $client->collection($name));
        }
        $this->assertSame('purchase-orders', $client->purchaseOrders->name);
        $this->assertInstanceOf(Payments::class, $client->payments);
        $this->expectException(\OutOfRangeException::class);
        $client->purchase_orders;
    }

    public function testHeadersQueryAndBaseUrl(): void
    {
        $client = Client::sandbox('gbl_test_headers', $this->receiver->url . '/');
        $this->assertSame($this->receiver->url . '/v1', $client->baseUrl);
        $client->leases->page(
            filters: ['status' => 'active', 'rent' => ['gte' => 1000, 'in' => [1, 2]], 'furnished' => false],
            sort: ['-start_date', 'number'],
            fields: ['id', 'rent'],
            limit: 5,
        );
        [$get] = $this->receiver->requests();
        $this->assertSame('GET', $get['method']);
        $this->assertSame(
            '/v1/leases?filter%5Bstatus%5D=active&filter%5Brent%5D%5Bgte%5D=1000&filter%5Brent%5D%5Bin%5D=1%2C2'
            . '&filter%5Bfurnished%5D=false&sort=-start_date%2Cnumber&fields%5Bleases%5D=id%2Crent&limit=5',
            $get['path'],
        );
        $headers = array_change_key_case($get['headers']);
        $this->assertSame('Bearer gbl_test_headers', $headers['authorization']);
        $this->assertSame('2026-11-22', $headers['gable-version']);
        $this->assertSame('gable-php/0.1.0', $headers['user-agent']);
        $this->assertArrayNotHasKey('idempotency-key', $headers, 'only POSTs carry one');
    }

    /** @testdox expand is a repeated expand[] on every call and every page, beside fields */
    public function testExpandIsRepeatedOnEveryCallAndEveryPage(): void
    {
        $expand = ['unit', 'unit.property'];
        $pages = new Client('gbl_test_x', "{$this->receiver->url}/two-pages");
        $leases = iterator_to_array($pages->leases->list(filters: ['status' => 'active'], fields: ['units' => ['number']], limit: 1, expand: $expand), false);
        $this->assertSame(['a', 'b'], array_column($leases, 'id'));

        $client = new Client('gbl_test_x', $this->receiver->url);
        $client->leases->get('l 1', expand: $expand, fields: ['leases' => ['rent'], 'units' => ['number', 'bedrooms']]);
        $client->leases->create(['rent' => 1], 'k-123456', $expand);
        $client->leases->update('l1', ['rent' => 2], expand: ['unit'], fields: ['rent']);
        $client->leases->action('l1', 'send', expand: $expand);
        $client->payments->createTestPayment('succeeded', '1.00', 'USD', expand: ['invoice']);
        $client->leases->get('l1');

        $e = 'expand%5B%5D=unit&expand%5B%5D=unit.property';
        $this->assertSame([
            "GET /two-pages/v1/leases?filter%5Bstatus%5D=active&fields%5Bunits%5D=number&{$e}&limit=1",
            "GET /two-pages/v1/leases?filter%5Bstatus%5D=active&fields%5Bunits%5D=number&{$e}&limit=1&cursor=c2",
            "GET /v1/leases/l%201?fields%5Bleases%5D=rent&fields%5Bunits%5D=number%2Cbedrooms&{$e}",
            "POST /v1/leases?{$e}",
            'PATCH /v1/leases/l1?fields%5Bleases%5D=rent&expand%5B%5D=unit',
            "POST /v1/leases/l1/send?{$e}",
            'POST /v1/payments?expand%5B%5D=invoice',
            'GET /v1/leases/l1',
        ], array_map(static fn (array $r) => "{$r['method']} {$r['path']}", $this->receiver->requests()));
        $this->assertSame('k-123456', array_change_key_case($this->receiver->requests()[3]['headers'])['idempotency-key']);
    }

    public function testAPostIsRetriedWithItsIdempotencyKey(): void
    {
        $client = new Client('gbl_test_x', "{$this->receiver->url}/fail-twice", maxRetries: 2);
        $this->assertSame(['ok' => true], $client->leads->create([]));
        $requests = $this->receiver->requests();
        $this->assertCount(3, $requests, 'two 503s, then the answer');
        $keys = array_map(static fn (array $r) => array_change_key_case($r['headers'])['idempotency-key'], $requests);
        $this->assertMatchesRegularExpression('/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', $keys[0]);
        $this->assertSame([$keys[0], $keys[0], $keys[0]], $keys, 'the retries reuse the key');
        $this->assertSame('{}', $requests[0]['body']);
    }

    /** @testdox A 5xx after the retries is a ServerException */
    public function testA5xxAfterTheRetriesIsAServerException(): void
    {
        $client = new Client('gbl_test_x', "{$this->receiver->url}/fail-twice", maxRetries: 1);
        try {
            $client->leads->create(['name' => 'Lee']);
            $this->fail('no exception');
        } catch (ServerException $e) {
            $this->assertSame([503, 'unavailable', 'req_receiver'], [$e->status, $e->errorCode, $e->requestId]);
            $this->assertSame('unavailable', $e->getCode());
        }
        $this->assertCount(2, $this->receiver->requests());
    }

    /** @testdox A network failure is the base exception, status 0, network_error */
    public function testANetworkFailureIsStatus0(): void
    {
        // A port that was free a moment ago: nothing listens there.
        $socket = stream_socket_server('tcp://127.0.0.1:0');
        $address = stream_socket_get_name($socket, false);
        fclose($socket);
        $client = new Client('gbl_test_x', "http://{$address}", maxRetries: 1);
        try {
            $client->units->page();
            $this->fail('no exception');
        } catch (GableException $e) {
            $this->assertSame(GableException::class, get_class($e));
            $this->assertSame([0, 'network_error'], [$e->status, $e->errorCode]);
        }
    }
}
